import { Link } from 'react-router-dom';
import { useAppState, useCreateLesson } from '../appState';
import { formatFull, formatRelative } from '../core/time';

const RECENT = 8;

export default function HomePage() {
  const { chats } = useAppState();
  const { create, creating, error } = useCreateLesson();

  return (
    <div className="page page-narrow">
      <h1>Welcome to Learning Harness</h1>
      <p className="lead">Learn anything with a patient tutor: start a lesson and ask your first question.</p>
      <button type="button" className="btn btn-primary btn-large" data-testid="start-lesson" onClick={() => void create()} disabled={creating}>
        {creating ? 'Starting…' : 'Start a lesson'}
      </button>
      {error && (
        <p className="error-text" role="alert">
          {error} <Link to="/settings">Open Settings</Link>
        </p>
      )}

      <h2>Recent lessons</h2>
      {chats === null && <p className="muted">Loading…</p>}
      {chats && chats.length === 0 && <p className="muted">No lessons yet.</p>}
      {chats && chats.length > 0 && (
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
      )}
    </div>
  );
}
