import './homePage.css';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useActivity } from '../../activityState';
import { useAppState, useCreateLesson } from '../../appState';
import { needsTeacher } from '../../core/machine_room/firstRun';
import FirstRun from '../machine_room/FirstRun';
import { formatFull, formatRelative } from '../../core/time';
import { useGraphData } from './graph/useGraphData';
import GraphHome, { type PracticeDialog } from './graph/GraphHome';

const RECENT = 6;

/** Home: the knowledge graph when it has nodes; otherwise the first screen while no real teacher is
 * set up (FirstRun, issue 29 item 2; it stays to say the teacher is ready once one is chosen), else a
 * friendly start. `practiceDialog` is Practice's create-set dialog, opened from the chain table's
 * selection (see GraphHome). */
export default function HomePage({ practiceDialog }: { practiceDialog: PracticeDialog }) {
  const graph = useGraphData();
  const { data, error, refresh } = graph;
  const { settings } = useAppState();
  const [setUp, setSetUp] = useState<string | null>(null);

  if (data === null) {
    return (
      <div className="page graph-loading" data-testid="graph-loading">
        {error ? (
          <div className="banner banner-error" role="alert">
            The graph could not be read: {error}{' '}
            <button type="button" className="btn btn-small" onClick={() => void refresh()}>
              Retry
            </button>
          </div>
        ) : (
          <p className="muted">Loading your knowledge graph…</p>
        )}
      </div>
    );
  }
  if (data.nodes.length === 0) {
    if (setUp !== null || needsTeacher(settings)) return <FirstRun done={setUp} onDone={setSetUp} />;
    return <EmptyStart />;
  }
  return <GraphHome graph={{ ...graph, data }} practiceDialog={practiceDialog} />;
}

function EmptyStart() {
  const { chats } = useAppState();
  const { create, creating, error } = useCreateLesson();
  const { runningCount } = useActivity();

  return (
    <div className="page graph-empty" data-testid="graph-empty">
      <div className="graph-empty-card">
        <svg className="graph-empty-art" width="132" height="84" viewBox="0 0 132 84" aria-hidden="true">
          <path d="M22 56 54 26M54 26l34 10M88 36l24 30M54 26l8 40M62 66l26-30" className="art-edges" strokeWidth="1.6" fill="none" />
          <circle cx="22" cy="56" r="7" fill="#4a7bd0" />
          <circle cx="54" cy="26" r="8" fill="#4f9d69" />
          <circle cx="88" cy="36" r="7" fill="#d9823b" />
          <circle cx="112" cy="66" r="6" fill="#8467b8" />
          <path className="art-diamond" d="M62 59l7 7-7 7-7-7z" />
        </svg>
        <h1>Your knowledge graph starts here</h1>
        <p className="lead">
          What you learn in lessons and what your notes state becomes ideas (short facts), linked by the reasoning that connects them. Begin a lesson or
          import some notes, and the graph grows on this page.
        </p>
        <div className="graph-empty-actions">
          <button type="button" className="btn btn-primary btn-large" data-testid="begin-lesson" onClick={() => void create()} disabled={creating}>
            {creating ? 'Starting…' : 'Begin a lesson'}
          </button>
          <Link to="/library" className="btn btn-large" data-testid="empty-import">
            Import notes
          </Link>
        </div>
        {error && (
          <p className="error-text" role="alert">
            {error} <Link to="/settings">Open Settings</Link>
          </p>
        )}
        {runningCount > 0 && (
          <p className="muted small" data-testid="graph-empty-running">
            <span className="running-dot" aria-hidden="true" /> {runningCount === 1 ? 'A source is' : `${runningCount} sources are`} being read; the graph appears
            here as soon as the first one is done.
          </p>
        )}
      </div>

      {chats && chats.length > 0 && (
        <section className="graph-empty-recent">
          <h2>Recent lessons</h2>
          <ul className="recent-list">
            {chats.slice(0, RECENT).map((chat) => (
              <li key={chat.id}>
                <Link to={`/chat/${encodeURIComponent(chat.id)}`} data-testid="recent-session-link">
                  {chat.title || 'Untitled lesson'}
                </Link>
                <span className="muted small" title={formatFull(chat.updatedAt)}>
                  {formatRelative(chat.updatedAt)}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
