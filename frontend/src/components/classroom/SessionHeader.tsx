import './sessionHeader.css';
import type { ChatStatus } from 'ai';
import type { Phase } from '../../core/classroom/phases';
import type { LessonCoverage } from '../../core/classroom/lessonGraph';
import type { ChatModel } from '../../core/types';
import { formatUsage, usageByTurn, usageTotals, type UsageEntry } from '../../core/usage';
import { CoverageRing, SessionMenu } from './LessonGraph';
import PhaseStepper from './PhaseStepper';
import SessionModel from './SessionModel';
import MathText from '../MathText';
import { useNarrow } from '../useNarrow';

interface Props {
  chatId: string;
  title: string;
  status: ChatStatus;
  phase: Phase;
  model: ChatModel | null;
  usage: UsageEntry[];
  busy: boolean;
  onModelChanged: (model: ChatModel | null) => void;
  coverage: LessonCoverage | null;
  coverageError: string | null;
  onCoverage: (coverage: LessonCoverage) => void;
  /** The plan panel's toggle (shown below 900 px, where the panel is not always in view). */
  planOpen: boolean;
  onTogglePlan: () => void;
}

export default function SessionHeader({ chatId, title, status, phase, model, usage, busy, onModelChanged, coverage, coverageError, onCoverage, planOpen, onTogglePlan }: Props) {
  const totals = usageTotals(usage);
  // On a phone the header is one line: the phases, the model and the usage move into the lesson menu.
  const narrow = useNarrow();
  const thinking = status === 'submitted' || status === 'streaming';
  const meta = (
    <div className="chat-meta">
      <SessionModel chatId={chatId} model={model} busy={busy} onChanged={onModelChanged} />
      {totals.entries === 0 ? (
        <span className="usage-total muted" data-testid="usage-total">
          no model usage yet
        </span>
      ) : (
        // Once per lesson: the total, with each turn's usage on demand.
        <details className="usage-details">
          <summary className="usage-total" data-testid="usage-total" title="Model use in this lesson: show each turn">
            {formatUsage(totals)}
          </summary>
          <ol className="usage-turns" data-testid="usage-turns">
            {usageByTurn(usage).map((line) => (
              <li key={line.messageId} data-testid="usage-turn">
                Turn {line.turn} · {line.roles.join(' + ')} · {line.models.join(', ')} · {formatUsage(line.totals)} ·{' '}
                {line.totals.requests} model call{line.totals.requests === 1 ? '' : 's'}
              </li>
            ))}
          </ol>
        </details>
      )}
    </div>
  );
  return (
    <header className="chat-header">
      <div className="chat-header-row">
        <h1 className="chat-title">
          <MathText text={title} />
        </h1>
        {!narrow && <PhaseStepper phase={phase} />}
        {/* plain words for the learner: a spinner while the tutor works, nothing when idle (the raw
            stream state stays machine-readable in the hidden span) */}
        <span className={`chat-status status-${status}`} role="status">
          <span hidden data-testid="chat-status">
            {status}
          </span>
          {thinking && (
            <span className="chat-thinking" data-testid="chat-thinking">
              <span className="spinner spinner-tiny" aria-hidden="true" />
              Thinking…
            </span>
          )}
          {status === 'error' && <span>Something went wrong</span>}
        </span>
        <CoverageRing coverage={coverage} error={coverageError} />
        <SessionMenu chatId={chatId} coverage={coverage} busy={busy} onCoverage={onCoverage}>
          {narrow && (
            <div className="session-menu-extra" data-testid="session-menu-extra">
              <PhaseStepper phase={phase} />
              {meta}
            </div>
          )}
        </SessionMenu>
        <button
          type="button"
          className="btn btn-small plan-toggle"
          data-testid="plan-toggle"
          aria-expanded={planOpen}
          aria-controls="plan-panel"
          onClick={onTogglePlan}
        >
          Plan
        </button>
      </div>
      {!narrow && meta}
    </header>
  );
}
