import './sessionRow.css';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import type { ChatSummary } from '../../core/types';
import { formatFull, formatRelative } from '../../core/time';
import MathText from '../MathText';

interface Props {
  chat: ChatSummary;
  active: boolean;
  onRename: (title: string) => Promise<string | null>;
  onDelete: () => void;
}

/** A row of the session list: link, running dot, rename (inline) and delete. */
export default function SessionRow({ chat, active, onRename, onDelete }: Props) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const title = chat.title || 'Untitled lesson';

  useEffect(() => {
    if (editing) inputRef.current?.select();
  }, [editing]);

  async function save() {
    const next = draft.trim();
    if (!next || next === chat.title) {
      setEditing(false);
      return;
    }
    setSaving(true);
    const problem = await onRename(next);
    setSaving(false);
    if (problem) setError(problem);
    else setEditing(false);
  }

  return (
    <div className={active ? 'session-row active' : 'session-row'} data-testid="session-row" data-chat-id={chat.id}>
      {editing ? (
        <div className="session-edit">
          <input
            ref={inputRef}
            type="text"
            data-testid="session-title-input"
            aria-label="Lesson title"
            value={draft}
            maxLength={200}
            onChange={(e) => {
              setDraft(e.target.value);
              setError(null);
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                void save();
              } else if (e.key === 'Escape') {
                setEditing(false);
              }
            }}
            onBlur={() => {
              if (!saving && !error) setEditing(false);
            }}
          />
          {error && (
            <p className="sidebar-error small" role="alert" data-testid="session-rename-error">
              {error}
            </p>
          )}
        </div>
      ) : (
        <Link
          to={`/chat/${encodeURIComponent(chat.id)}`}
          className={active ? 'session-link active' : 'session-link'}
          aria-current={active ? 'page' : undefined}
          data-testid="session-link"
          data-chat-id={chat.id}
        >
          <span className="session-title">
            {chat.running && <span className="running-dot" data-testid="session-running" title="A reply is being written" />}
            <MathText text={title} />
          </span>
          <span className="session-meta" title={formatFull(chat.updatedAt)}>
            {chat.running ? 'writing… · ' : ''}
            {formatRelative(chat.updatedAt)}
          </span>
        </Link>
      )}
      {!editing && (
        <span className="session-actions">
          <button
            type="button"
            className="icon-btn"
            data-testid="session-rename"
            aria-label={`Rename “${title}”`}
            title="Rename"
            onClick={() => {
              setDraft(chat.title);
              setError(null);
              setEditing(true);
            }}
          >
            <PencilIcon />
          </button>
          <button type="button" className="icon-btn" data-testid="session-delete" aria-label={`Delete “${title}”`} title="Delete" onClick={onDelete}>
            <TrashIcon />
          </button>
        </span>
      )}
    </div>
  );
}

function PencilIcon() {
  return (
    <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true">
      <path d="M11.3 2.3a1 1 0 0 1 1.4 0l1 1a1 1 0 0 1 0 1.4L6 12.4 3 13l.6-3 7.7-7.7z" fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinejoin="round" />
    </svg>
  );
}

function TrashIcon() {
  return (
    <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true">
      <path d="M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.5h5.8l.6-8.5" fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
