// Settings → Trash (issue 31 item 6, decision 0043): deleted lessons and problem sets kept 30
// days; restore one (it comes back whole), or empty the trash (removed for good, after a yes).

import { useCallback, useEffect, useState } from 'react';
import * as api from '../../api';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { entryLine, entryTitle, type TrashList } from '../../core/trash';
import { useServerEvents } from '../../serverEvents';
import ConfirmDialog from '../ConfirmDialog';
import './trashSettings.css';

export default function TrashSettings() {
  const { refreshChats } = useAppState();
  const [trash, setTrash] = useState<TrashList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [emptying, setEmptying] = useState(false);
  const [emptyError, setEmptyError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setTrash(await api.getTrash());
    } catch (err) {
      setError(`Could not read the trash: ${describeError(err).detail}`);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);
  // a lesson deleted in the sidebar (`chats-changed`) or a set on the Practice page
  // (`activity-changed`) while Settings is open shows up here without a reload (the new-user trial)
  useServerEvents(['chats-changed', 'activity-changed'], () => void load());

  async function restore(id: string) {
    setError(null);
    setBusy(id);
    try {
      await api.restoreFromTrash(id);
      await refreshChats();
    } catch (err) {
      setError(`Not restored: ${describeError(err).detail}`);
    } finally {
      setBusy(null);
      await load();
    }
  }

  async function empty() {
    setEmptyError(null);
    setBusy('*');
    try {
      await api.emptyTrash();
      setEmptying(false);
    } catch (err) {
      setEmptyError(describeError(err).detail);
    } finally {
      setBusy(null);
      await load();
    }
  }

  const entries = trash?.entries ?? [];
  const now = Date.now();
  return (
    <section className="card trash-settings" data-testid="trash-settings" aria-labelledby="trash-title">
      <h2 id="trash-title">Trash</h2>
      <p className="muted">
        Deleted lessons and problem sets stay here for {trash?.days ?? 30} days, then they are removed for good. A lesson comes back
        whole: its transcript, plan and Workbench results. What it taught stays in the graph unless you removed it when deleting.
      </p>
      {error && (
        <div className="banner banner-error" role="alert" data-testid="trash-error">
          {error}
        </div>
      )}
      {trash === null && !error && <p className="muted small">Loading…</p>}
      {trash && entries.length === 0 && (
        <p className="muted small" data-testid="trash-empty">
          The trash is empty.
        </p>
      )}
      {entries.length > 0 && (
        <>
          <ul className="trash-list" data-testid="trash-list">
            {entries.map((entry) => (
              <li key={entry.id} className="trash-row" data-testid="trash-row" data-id={entry.id}>
                <div>
                  <div className="trash-title">{entryTitle(entry)}</div>
                  <div className="muted small">{entryLine(entry, now)}</div>
                </div>
                <button type="button" className="btn btn-small" data-testid="trash-restore" disabled={busy !== null} onClick={() => void restore(entry.id)}>
                  {busy === entry.id ? 'Restoring…' : 'Restore'}
                </button>
              </li>
            ))}
          </ul>
          <button type="button" className="btn btn-danger" data-testid="trash-empty-button" disabled={busy !== null} onClick={() => setEmptying(true)}>
            Empty the trash
          </button>
        </>
      )}
      {emptying && (
        <ConfirmDialog
          title="Empty the trash?"
          confirmLabel="Empty the trash"
          busy={busy === '*'}
          error={emptyError}
          onConfirm={() => void empty()}
          onCancel={() => setEmptying(false)}
        >
          <p>
            {entries.length} {entries.length === 1 ? 'item is' : 'items are'} removed for good. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
