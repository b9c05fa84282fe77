import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import * as api from '../../api';
import { describeError } from '../../core/errors';
import { pushToast } from '../../core/toasts';
import { deletedToast } from '../../core/trash';
import { levelsLine, setRowWords, type PracticeLevels, type SetStatus, type SetSummary } from '../../core/practice/practice';
import { formatFull, formatRelative } from '../../core/time';
import { useServerEvents } from '../../serverEvents';
import { usePracticeLevels } from './usePracticeLevels';
import { useConfirmDelete } from '../../useConfirmDelete';
import ConfirmDialog from '../ConfirmDialog';
import CreateSetDialog from './CreateSetDialog';
import './practiceList.css';

const STATUS_LABEL: Record<SetStatus, string> = {
  partitioning: 'Partitioning',
  generating: 'Generating',
  ready: 'Ready',
  error: 'Error',
};

/** `/practice`: every problem set, newest first, followed live; New opens the creation dialog. */
export default function PracticePage() {
  const { levels } = usePracticeLevels();
  const [sets, setSets] = useState<SetSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const seq = useRef(0);

  const load = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const list = await api.listPracticeSets();
      if (mine !== seq.current) return;
      setSets(list);
      setError(null);
    } catch (err) {
      if (mine === seq.current) setError(describeError(err).detail);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  // Every practice row and phase write, every grade (and every reconnect): read the list again.
  useServerEvents(['activity-changed'], () => void load());

  const del = useConfirmDelete<SetSummary>(
    async (set) => {
      await api.deletePracticeSet(set.id);
      setSets((list) => list?.filter((s) => s.id !== set.id) ?? null);
      pushToast({
        text: deletedToast('practiceSet', set.title),
        action: {
          label: 'Undo',
          run: async () => {
            await api.restoreFromTrash(set.id);
            await load();
          },
        },
      });
    },
    () => void load(),
  );
  const deleting = del.target;

  return (
    <div className="page practice-page">
      <header className="practice-page-head">
        <div>
          <h1>Practice</h1>
          <p className="muted">Problem sets built from your graph: reason them through, submit once, see the model solution and a score.</p>
        </div>
        <button type="button" className="btn btn-primary" data-testid="practice-new" onClick={() => setCreating(true)}>
          New problem set
        </button>
      </header>

      {error && (
        <p className="error-text" role="alert" data-testid="practice-error">
          Could not load your problem sets: {error}
        </p>
      )}
      {sets === null && !error && <p className="muted small">Loading…</p>}
      {sets && sets.length === 0 && (
        <p className="muted practice-empty" data-testid="practice-empty">
          No problem sets yet. Make one with New problem set above, or open Home → Chains, select the ideas you want to practise and choose Generate problem set.
        </p>
      )}
      {sets && sets.length > 0 && (
        <ul className="practice-list" data-testid="practice-list">
          {sets.map((s) => (
            <SetRow
              key={s.id}
              set={s}
              levels={levels}
              onDelete={() => del.ask(s)}
            />
          ))}
        </ul>
      )}

      {creating && <CreateSetDialog onClose={() => setCreating(false)} />}

      {deleting && (
        <ConfirmDialog
          title="Delete this problem set?"
          confirmLabel="Delete"
          busy={del.busy}
          error={del.error}
          onConfirm={() => void del.confirm()}
          onCancel={del.cancel}
          testIds={{ dialog: 'practice-delete-dialog', confirm: 'practice-delete-confirm', cancel: 'practice-delete-cancel', error: 'practice-delete-error' }}
        >
          <p>
            “{deleting.title || 'Untitled set'}”, its problems and your answers go to the trash for 30 days (Settings → Trash)
            {deleting.status === 'partitioning' || deleting.status === 'generating' ? '; its generation stops first' : ''}.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

function SetRow({ set, levels, onDelete }: { set: SetSummary; levels: PracticeLevels; onDelete: () => void }) {
  const running = set.status === 'partitioning' || set.status === 'generating';
  return (
    <li className={`practice-row status-${set.status}`} data-testid="practice-row" data-set-id={set.id} data-status={set.status}>
      <div className="practice-row-main">
        <div className="practice-row-head">
          <span className={`practice-status status-${set.status}`} data-testid="practice-row-status">
            {running && <span className="spinner spinner-tiny" aria-hidden="true" />}
            {STATUS_LABEL[set.status]}
          </span>
          <Link to={`/practice/${encodeURIComponent(set.id)}`} className="practice-row-title" data-testid="practice-row-link" title={set.title}>
            {set.title || 'Untitled set'}
          </Link>
        </div>
        <div className="practice-row-meta">
          <span data-testid="practice-row-levels">{levelsLine(levels, set.params)}</span>
          <span className={set.status === 'error' ? 'error-text' : undefined} data-testid="practice-row-counts">
            {setRowWords(set)}
          </span>
          {set.createdAt && <span title={formatFull(set.createdAt)}>{formatRelative(set.createdAt)}</span>}
        </div>
      </div>
      <button type="button" className="icon-btn practice-delete" data-testid="practice-delete" aria-label={`Delete ${set.title || 'this set'}`} title="Delete this set" onClick={onDelete}>
        ×
      </button>
    </li>
  );
}
