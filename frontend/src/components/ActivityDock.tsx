import { useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import { useActivity } from '../activityState';
import { formatRowUsage, formatStats, isRunningRow, type ActivityRow } from '../core/activity';
import { formatFull, formatRelative } from '../core/time';
import PhasePill from './PhasePill';

const SHOWN = 40;

/** The background-activity panel (opened from the sidebar's Activity button, on every page). */
export default function ActivityDock() {
  const { dockOpen, setDockOpen, rows, error, runningCount } = useActivity();

  useEffect(() => {
    if (!dockOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setDockOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dockOpen, setDockOpen]);

  if (!dockOpen) return null;
  const shown = rows?.slice(0, SHOWN) ?? [];
  const older = (rows?.length ?? 0) - shown.length;

  return (
    <section className="activity-dock" id="activity-dock" aria-label="Background activity" data-testid="activity-dock">
      <header className="activity-dock-head">
        <div>
          <h2>Background activity</h2>
          <p className="muted small" title="Lessons and imported notes being read into your knowledge graph">
            {runningCount > 0 ? `${runningCount} job${runningCount === 1 ? '' : 's'} running` : 'Nothing running'}
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
        {rows !== null && rows.length === 0 && (
          <p className="muted small">
            Nothing has run yet. <Link to="/library">Import notes</Link>, or take a lesson: both are read into your graph here.
          </p>
        )}
        {shown.length > 0 && (
          <ul className="activity-list">
            {shown.map((row) => (
              <ActivityRowView key={`${row.id}@${row.startedAt}`} row={row} />
            ))}
          </ul>
        )}
        {older > 0 && <p className="muted small">and {older} older</p>}
      </div>
    </section>
  );
}

function ActivityRowView({ row }: { row: ActivityRow }) {
  const { abort, aborting } = useActivity();
  const [notice, setNotice] = useState<string | null>(null);
  const running = isRunningRow(row);
  const stats = row.phase === 'done' ? formatStats(row.stats) : '';
  const when = row.endedAt ?? row.startedAt;
  const target = row.kind === 'chat' ? `/chat/${encodeURIComponent(row.source)}` : '/library';

  return (
    <li className={`activity-row phase-${row.phase}`} data-testid="activity-row" data-phase={row.phase} data-source={row.source}>
      <div className="activity-row-head">
        <PhasePill phase={row.phase} />
        <Link to={target} className="activity-label" title={row.label}>
          {row.label}
        </Link>
        {running && (
          <button
            type="button"
            className="btn btn-small"
            data-testid="activity-abort"
            disabled={aborting.has(row.source)}
            title={row.kind === 'chat' ? 'Stop reading this lesson (all its remaining parts)' : 'Stop importing this file (all its remaining parts)'}
            onClick={() => {
              setNotice(null);
              void abort(row.source).then(setNotice);
            }}
          >
            {aborting.has(row.source) ? 'Aborting…' : 'Abort'}
          </button>
        )}
      </div>
      <div className="activity-meta">
        <span>{row.kind === 'chat' ? 'Lesson' : 'Notes'}</span>
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
