import './activityDock.css';
import { useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import { useActivity } from '../../activityState';
import { useSecondClock } from './useSecondClock';
import {
  formatElapsed,
  formatRowUsage,
  formatStats,
  importCountsWords,
  isRunningRow,
  jobKindWords,
  pendingWords,
  rowKey,
  rowKindWords,
  rowTarget,
  runningWords,
  splitJobRows,
  type ActivityRow,
  type PendingLesson,
} from '../../core/machine_room/activity';
import { formatFull, formatRelative } from '../../core/time';
import PhasePill from './PhasePill';

const SHOWN = 40;

/** The background-activity panel (opened from the sidebar's Activity button, on every page). */
export default function ActivityDock() {
  const { dockOpen, setDockOpen, rows, pending, error, runningCount } = useActivity();

  useEffect(() => {
    if (!dockOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setDockOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dockOpen, setDockOpen]);

  if (!dockOpen) return null;
  const { agents, others } = splitJobRows(rows ?? []);
  const shown = others.slice(0, SHOWN);
  const older = others.length - shown.length;

  return (
    <section className="activity-dock" id="activity-dock" aria-label="Background activity" data-testid="activity-dock">
      <header className="activity-dock-head">
        <div>
          <h2>Background activity</h2>
          <p className="muted small" title="Lessons and imported notes being read into your knowledge graph">
            {runningCount > 0 ? runningWords(rows) : 'Nothing running'}
          </p>
        </div>
        <button type="button" className="icon-btn" aria-label="Close activity" title="Close (Esc)" data-testid="activity-close" onClick={() => setDockOpen(false)}>
          ×
        </button>
      </header>
      <div className="activity-dock-body">
        {error && (
          <p className="error-text small" role="alert" data-testid="activity-error">
            Could not load activity: {error}
          </p>
        )}
        {rows === null && !error && <p className="muted small">Loading…</p>}
        {agents.length > 0 && <AgentRows rows={agents} />}
        {agents.length > 0 && (pending.length > 0 || shown.length > 0) && <h3 className="activity-group-title">Your graph and practice</h3>}
        {pending.length > 0 && (
          <ul className="activity-list" data-testid="activity-pending">
            {pending.map((p) => (
              <PendingRowView key={p.source} pending={p} />
            ))}
          </ul>
        )}
        {rows !== null && rows.length === 0 && pending.length === 0 && (
          <p className="muted small" data-testid="activity-empty">
            Nothing has run yet. <Link to="/library">Imported notes</Link> are read into your graph at once. A lesson is read when you leave it,
            after a few minutes without a turn, or when you choose “Add to my graph now” in its menu (⋯).
          </p>
        )}
        {shown.length > 0 && (
          <ul className="activity-list">
            {shown.map((row) => (
              <ActivityRowView key={rowKey(row)} row={row} />
            ))}
          </ul>
        )}
        {older > 0 && <p className="muted small">and {older} older</p>}
      </div>
    </section>
  );
}

/** Abort a row's run; the outcome (or why not) goes to `onNotice`. */
function AbortButton(props: { source: string; testId: string; title: string; onNotice: (notice: string | null) => void }) {
  const { abort, aborting } = useActivity();
  const busy = aborting.has(props.source);
  return (
    <button
      type="button"
      className="btn btn-small"
      data-testid={props.testId}
      disabled={busy}
      title={props.title}
      onClick={() => {
        props.onNotice(null);
        void abort(props.source).then(props.onNotice);
      }}
    >
      {busy ? 'Aborting…' : 'Abort'}
    </button>
  );
}

function ActivityRowView({ row }: { row: ActivityRow }) {
  const [notice, setNotice] = useState<string | null>(null);
  const running = isRunningRow(row);
  const stats = row.phase === 'done' ? formatStats(row.stats) : '';
  const when = row.endedAt ?? row.startedAt ?? row.queuedAt;
  const target = rowTarget(row);

  return (
    <li className={`activity-row phase-${row.phase}`} data-testid="activity-row" data-phase={row.phase} data-source={row.source}>
      <div className="activity-row-head">
        <PhasePill phase={row.phase} />
        <Link to={target} className="activity-label" title={row.label}>
          {row.label}
        </Link>
        {running && (
          <AbortButton
            source={row.source}
            testId="activity-abort"
            title={
              row.kind === 'chat'
                ? 'Stop reading this lesson (all its remaining parts)'
                : row.kind === 'import'
                  ? 'Stop this import (every file not read yet)'
                  : row.kind === 'practice'
                    ? 'Stop this practice job'
                    : 'Stop importing this file (all its remaining parts)'
            }
            onNotice={setNotice}
          />
        )}
      </div>
      <div className="activity-meta">
        <span data-testid="activity-kind">{rowKindWords(row)}</span>
        {row.kind === 'import' && <span data-testid="import-counts">{importCountsWords(row.counts)}</span>}
        <span data-testid="activity-usage">{formatRowUsage(row)}</span>
        {when && <span title={formatFull(when)}>{formatRelative(when)}</span>}
      </div>
      {stats && <div className="activity-stats">{stats}</div>}
      {row.error && (
        <p className="activity-error" data-testid="activity-row-error">
          {row.error}
        </p>
      )}
      {notice && <p className="muted small">{notice}</p>}
    </li>
  );
}

/** The lessons' background agents (research, demos, drawings) while they work, with an Abort. */
export function AgentRows({ rows }: { rows: readonly ActivityRow[] }) {
  const [now, setNow] = useState(() => Date.now());
  const anyRunning = rows.some(isRunningRow);
  useEffect(() => {
    if (!anyRunning) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [anyRunning]);
  return (
    <>
      <h3 className="activity-group-title">Background agents</h3>
      <ul className="activity-list activity-agents" data-testid="activity-agents">
        {rows.map((row) => (
          <AgentRowView key={rowKey(row)} row={row} now={now} />
        ))}
      </ul>
    </>
  );
}

function AgentRowView({ row, now }: { row: ActivityRow; now: number }) {
  const [notice, setNotice] = useState<string | null>(null);
  const running = isRunningRow(row);
  const elapsed = formatElapsed(row, now);
  return (
    <li className={`activity-row phase-${row.phase}`} data-testid="agent-row" data-phase={row.phase} data-source={row.source}>
      <div className="activity-row-head">
        <PhasePill phase={row.phase} />
        {row.chatId ? (
          <Link to={`/chat/${encodeURIComponent(row.chatId)}`} className="activity-label" title={row.label}>
            {row.label}
          </Link>
        ) : (
          <span className="activity-label" title={row.label}>
            {row.label}
          </span>
        )}
        {running && (
          <AbortButton
            source={row.source}
            testId="agent-abort"
            title="Stop this background agent; the teacher is told it was stopped"
            onNotice={setNotice}
          />
        )}
      </div>
      <div className="activity-meta">
        <span>{jobKindWords(row)}</span>
        {elapsed && <span data-testid="agent-elapsed">{running ? `running for ${elapsed}` : `ran ${elapsed}`}</span>}
        {!running && <span>{formatRowUsage(row)}</span>}
      </div>
      {row.error && <p className="activity-error">{row.error}</p>}
      {notice && <p className="muted small">{notice}</p>}
    </li>
  );
}

/** A lesson whose new teaching waits to be read into the graph, and when it will be. */
function PendingRowView({ pending }: { pending: PendingLesson }) {
  const now = useSecondClock(); // the lesson menu's clock: both say the same countdown
  return (
    <li className="activity-row phase-pending" data-testid="pending-row" data-source={pending.source} data-waiting={pending.waitingFor}>
      <div className="activity-row-head">
        <span className="phase-pill phase-queued">waiting</span>
        <Link to={`/chat/${encodeURIComponent(pending.source)}`} className="activity-label" title={pending.label}>
          {pending.label}
        </Link>
      </div>
      <div className="activity-meta">
        <span>Lesson</span>
        <span>{pendingWords(pending, now)}</span>
      </div>
    </li>
  );
}
