import { useCallback, useState } from 'react';
import { Link, NavLink, useMatch, useNavigate } from 'react-router-dom';
import * as api from '../../api';
import { useActivity } from '../../activityState';
import { useAppState, useCreateLesson } from '../../appState';
import { describeError } from '../../core/errors';
import { pushToast } from '../../core/toasts';
import { deletedToast } from '../../core/trash';
import type { ChatSummary } from '../../core/types';
import { useConfirmDelete } from '../../useConfirmDelete';
import ConfirmDialog from '../ConfirmDialog';
import LessonTaught from './LessonTaught';
import SearchBox from './SearchBox';
import SessionRow from './SessionRow';

export default function Sidebar() {
  const { chats, chatsError, refreshChats } = useAppState();
  const { create, creating, error } = useCreateLesson();
  const match = useMatch('/chat/:id');
  const currentId = match?.params.id;
  const navigate = useNavigate();
  const { dockOpen, setDockOpen, runningCount } = useActivity();

  const rename = useCallback(
    async (id: string, title: string): Promise<string | null> => {
      try {
        await api.renameChat(id, title);
        return null;
      } catch (err) {
        return describeError(err).detail;
      } finally {
        void refreshChats();
      }
    },
    [refreshChats],
  );

  /** The delete dialog's one explicit choice: also remove what the lesson taught from the graph (issue 29). */
  const [forget, setForget] = useState(false);
  const del = useConfirmDelete<ChatSummary>(
    async (chat) => {
      if (forget) {
        // first: a refusal (its reading runs) keeps the lesson and says why in the dialog
        const out = await api.removeLessonKnowledge(chat.id);
        if (out.status === 'running' || out.status === 'refused') throw new Error(out.detail);
      }
      await api.deleteChat(chat.id);
      if (chat.id === currentId) navigate('/');
      // moved to the trash (decision 0043): Undo brings the lesson back whole; what the dialog
      // removed from the graph stays removed (the graph is not part of the lesson)
      pushToast({
        text: deletedToast('lesson', chat.title) + (forget ? ' What it taught stays out of the graph.' : ''),
        action: {
          label: 'Undo',
          run: async () => {
            await api.restoreFromTrash(chat.id);
            await refreshChats();
          },
        },
      });
    },
    () => void refreshChats(),
  );
  const deleting = del.target;

  return (
    <aside className="sidebar" id="sidebar" data-testid="sidebar" aria-label="Lessons and pages">
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

      <SearchBox />

      <nav className="session-list" aria-label="Lessons">
        {chats === null && !chatsError && <p className="muted small">Loading…</p>}
        {chatsError && <p className="sidebar-error small">{chatsError}</p>}
        {chats && chats.length === 0 && <p className="muted small">No lessons yet.</p>}
        {chats?.map((chat) => (
          <SessionRow
            key={chat.id}
            chat={chat}
            active={chat.id === currentId}
            onRename={(title) => rename(chat.id, title)}
            onDelete={() => {
              setForget(false);
              del.ask(chat);
            }}
          />
        ))}
      </nav>

      <div className="sidebar-foot">
        <NavLink to="/library" className={({ isActive }) => (isActive ? 'sidebar-link active' : 'sidebar-link')} data-testid="nav-library">
          Import notes
        </NavLink>
        <NavLink to="/practice" className={({ isActive }) => (isActive ? 'sidebar-link active' : 'sidebar-link')} data-testid="nav-practice">
          Practice
        </NavLink>
        <button
          type="button"
          className={dockOpen ? 'sidebar-link activity-toggle open' : 'sidebar-link activity-toggle'}
          data-testid="activity-toggle"
          data-running={runningCount}
          aria-expanded={dockOpen}
          aria-controls="activity-dock"
          title={runningCount ? `${runningCount} background job${runningCount === 1 ? '' : 's'} running` : 'Background activity'}
          onClick={() => setDockOpen(!dockOpen)}
        >
          <span>Activity</span>
          {/* only when something runs: an idle badge would be a grey 0 (issue 18) */}
          {runningCount > 0 && (
            <span className="activity-count running" data-testid="activity-count" aria-label={`${runningCount} running`}>
              <span className="running-dot" aria-hidden="true" />
              {runningCount}
            </span>
          )}
        </button>
        <NavLink to="/settings" className={({ isActive }) => (isActive ? 'sidebar-link active' : 'sidebar-link')} data-testid="settings-link">
          Settings
        </NavLink>
      </div>

      {deleting && (
        <ConfirmDialog
          title="Delete this lesson?"
          confirmLabel="Delete"
          busy={del.busy}
          error={del.error}
          onConfirm={() => void del.confirm()}
          onCancel={del.cancel}
        >
          <p>
            “{deleting.title || 'Untitled lesson'}” and its whole transcript go to the trash: Undo right after, or restore it from Settings → Trash within 30
            days.
          </p>
          <LessonTaught chatId={deleting.id} forget={forget} onForgetChange={setForget} />
        </ConfirmDialog>
      )}
    </aside>
  );
}
