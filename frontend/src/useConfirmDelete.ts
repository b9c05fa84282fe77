import { useCallback, useState } from 'react';
import { runConfirmedDelete } from './core/confirmDelete';

/** What a confirm-before-delete dialog needs: the picked target (null: no dialog), busy, the error shown in it. */
export interface ConfirmDelete<T> {
  target: T | null;
  busy: boolean;
  error: string | null;
  /** Opens the dialog for `target` (any old error cleared). */
  ask: (target: T) => void;
  /** Closes the dialog (and its error). */
  cancel: () => void;
  /** Deletes the target (core/confirmDelete runConfirmedDelete): the dialog closes on success, shows the error otherwise. */
  confirm: () => Promise<void>;
}

/**
 * Confirm-before-delete state for the lesson list, the practice list and the graph.
 * `remove` does the delete and what follows its success; `settle` runs after every attempt.
 */
export function useConfirmDelete<T>(remove: (target: T) => Promise<void>, settle: () => void): ConfirmDelete<T> {
  const [target, setTarget] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ask = useCallback((t: T) => {
    setError(null);
    setTarget(t);
  }, []);
  const cancel = useCallback(() => {
    setTarget(null);
    setError(null);
  }, []);
  const confirm = () => runConfirmedDelete(target, { remove, setBusy, setError, setTarget, settle });
  return { target, busy, error, ask, cancel, confirm };
}
