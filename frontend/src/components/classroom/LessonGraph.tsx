import { useEffect, useRef, useState, type ReactNode } from 'react';
import * as api from '../../api';
import { useActivity } from '../../activityState';
import { describeError } from '../../core/errors';
import { canFlush, coveredFraction, coverageWords, flushNotice, ringLabel, type LessonCoverage } from '../../core/classroom/lessonGraph';
import { useSecondClock } from '../machine_room/useSecondClock';
import './lessonGraph.css';

const RADIUS = 9;
const CIRCUMFERENCE = 2 * Math.PI * RADIUS;

/** The session header's coverage ring: how much of the lesson's teaching is in the graph. */
export function CoverageRing({ coverage, error }: { coverage: LessonCoverage | null; error: string | null }) {
  const now = useSecondClock(); // the dock's clock: both say the same countdown
  // nothing taught yet: no ring (a bare "graph: —" explains nothing)
  if (coverage && coverage.totalTokens === 0 && !coverage.running && coverage.jobs.length === 0) return null;
  if (!coverage) {
    return error ? (
      <span className="coverage-ring coverage-unknown" data-testid="coverage-ring" title={`Could not read what is in your graph: ${error}`}>
        graph: ?
      </span>
    ) : null;
  }
  const reading = coverage.running || coverage.jobs.length > 0;
  const fraction = coveredFraction(coverage);
  const words = coverageWords(coverage, now);
  return (
    <span
      className={`coverage-ring${reading ? ' coverage-reading' : ''}`}
      data-testid="coverage-ring"
      data-covered={coverage.coveredTokens}
      data-uncovered={coverage.uncoveredTokens}
      data-running={reading ? 'true' : 'false'}
      title={words}
      aria-label={words}
      role="img"
    >
      <svg width="22" height="22" viewBox="0 0 22 22" aria-hidden="true">
        <circle className="ring-track" cx="11" cy="11" r={RADIUS} />
        <circle
          className="ring-fill"
          cx="11"
          cy="11"
          r={RADIUS}
          strokeDasharray={`${CIRCUMFERENCE * fraction} ${CIRCUMFERENCE}`}
          transform="rotate(-90 11 11)"
        />
      </svg>
      <span className="ring-label">{reading ? 'reading…' : `graph: ${ringLabel(coverage)}`}</span>
    </span>
  );
}

interface MenuProps {
  /** Extra content for the popover (on a phone: the phases, the model and the usage). */
  children?: ReactNode;
  chatId: string;
  coverage: LessonCoverage | null;
  busy: boolean;
  onCoverage: (coverage: LessonCoverage) => void;
}

/** The menu's coverage sentence, counting down on the dock's clock while the menu is open. */
function CoverageWords({ coverage }: { coverage: LessonCoverage }) {
  return <>{coverageWords(coverage, useSecondClock())}</>;
}

/** The session menu (⋯): "Add to my graph now", with what is and is not in the graph yet, and
 * "Export as Markdown" (issue 31). */
export function SessionMenu({ children, chatId, coverage, busy, onCoverage }: MenuProps) {
  const [open, setOpen] = useState(false);
  const [sending, setSending] = useState(false);
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const { refresh } = useActivity();
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    window.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      window.removeEventListener('keydown', onKey);
    };
  }, [open]);

  useEffect(() => {
    if (!notice) return;
    const timer = window.setTimeout(() => setNotice(null), 10_000);
    return () => window.clearTimeout(timer);
  }, [notice]);

  // While a reply is being written the server waits for it to end, so the action stays offered.
  const enabled = !sending && (canFlush(coverage) || (busy && !!coverage && !coverage.running));
  const why = !coverage
    ? 'Reading what is in your graph…'
    : coverage.running
      ? 'This lesson is being read into your graph right now.'
      : coverage.totalTokens === 0 && !busy
        ? 'Nothing taught yet.'
        : coverage.uncoveredTokens === 0 && !busy
          ? 'All of this lesson’s teaching is already in your graph.'
          : 'Read what this lesson taught into your knowledge graph now, without waiting.';

  async function add() {
    setSending(true);
    setNotice(null);
    try {
      const answer = await api.flushLesson(chatId, 'explicit');
      if (answer.coverage) onCoverage(answer.coverage);
      setNotice({ text: flushNotice(answer), error: false });
      void refresh();
    } catch (err) {
      setNotice({ text: describeError(err).detail, error: true });
    } finally {
      setSending(false);
      setOpen(false);
    }
  }

  return (
    <div className="session-menu" ref={ref}>
      <button
        type="button"
        className="icon-btn session-menu-button"
        data-testid="session-menu"
        aria-label="Lesson menu"
        aria-haspopup="menu"
        aria-expanded={open}
        title="Lesson menu"
        onClick={() => setOpen((o) => !o)}
      >
        ⋯
      </button>
      {open && (
        <div className="session-menu-popover" role="menu" data-testid="session-menu-popover">
          <button
            type="button"
            role="menuitem"
            className="session-menu-item"
            data-testid="add-to-graph"
            disabled={!enabled}
            title={why}
            onClick={() => void add()}
          >
            {sending ? 'Adding…' : 'Add to my graph now'}
          </button>
          <p className="session-menu-help small muted" data-testid="coverage-words">
            {coverage ? <CoverageWords coverage={coverage} /> : why}
          </p>
          {/* a plain download: the server streams the file (GET /api/chats/{id}/export.md) */}
          <a
            role="menuitem"
            className="session-menu-item"
            data-testid="export-lesson"
            href={`/api/chats/${encodeURIComponent(chatId)}/export.md`}
            download
            title="Download this lesson as a Markdown file (readable in Obsidian and on GitHub)"
            onClick={() => setOpen(false)}
          >
            Export as Markdown
          </a>
          {children}
        </div>
      )}
      {notice && notice.text && (
        <p className={notice.error ? 'graph-notice error-text' : 'graph-notice'} role="status" data-testid="graph-notice">
          {notice.text}
        </p>
      )}
    </div>
  );
}
