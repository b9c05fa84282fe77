import { Link, NavLink, useMatch } from 'react-router-dom';
import { useAppState, useCreateLesson } from '../appState';
import { formatFull, formatRelative } from '../core/time';

export default function Sidebar() {
  const { chats, chatsError } = useAppState();
  const { create, creating, error } = useCreateLesson();
  const match = useMatch('/chat/:id');
  const currentId = match?.params.id;

  return (
    <aside className="sidebar">
      <Link to="/" className="brand">
        Learning Harness
      </Link>
      <button type="button" className="btn btn-primary new-lesson" data-testid="new-lesson" onClick={() => void create()} disabled={creating}>
        {creating ? 'Starting…' : 'New lesson'}
      </button>
      {error && (
        <p className="sidebar-error" role="alert" data-testid="new-lesson-error">
          {error} <Link to="/settings">Settings</Link>
        </p>
      )}

      <nav className="session-list" aria-label="Lessons">
        {chats === null && !chatsError && <p className="muted small">Loading…</p>}
        {chatsError && <p className="sidebar-error small">{chatsError}</p>}
        {chats && chats.length === 0 && <p className="muted small">No lessons yet.</p>}
        {chats?.map((chat) => (
          <Link
            key={chat.id}
            to={`/chat/${encodeURIComponent(chat.id)}`}
            className={chat.id === currentId ? 'session-link active' : 'session-link'}
            aria-current={chat.id === currentId ? 'page' : undefined}
            data-testid="session-link"
            data-chat-id={chat.id}
          >
            <span className="session-title">{chat.title || 'Untitled lesson'}</span>
            <span className="session-meta" title={formatFull(chat.updatedAt)}>
              {formatRelative(chat.updatedAt)}
              {chat.messageCount > 0 ? ` · ${chat.messageCount} msg` : ''}
            </span>
          </Link>
        ))}
      </nav>

      <NavLink to="/settings" className={({ isActive }) => (isActive ? 'settings-link active' : 'settings-link')} data-testid="settings-link">
        Settings
      </NavLink>
    </aside>
  );
}
