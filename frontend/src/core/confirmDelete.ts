// One confirmed delete, as the lesson list, the practice list and the graph all run it.
import { describeError } from './errors';

/** Where a confirmed delete writes as it goes (React state setters in the hook, recorders in the tests). */
export interface DeleteSteps<T> {
  /** Does the delete (the server call and what follows on success); rejects with the failure. */
  remove: (target: T) => Promise<void>;
  setBusy: (busy: boolean) => void;
  setError: (error: string | null) => void;
  /** Called with null once `remove` resolved: the dialog closes. */
  setTarget: (target: null) => void;
  /** Called last, whether the delete worked or not (re-read the list). */
  settle: () => void;
}

/**
 * Runs the delete of `target` (nothing when it is null): busy on, error cleared; on success the
 * target is cleared, on failure the error's plain-words detail (core/errors describeError) is shown
 * and the target kept so the dialog stays open; busy off and `settle` either way.
 */
export async function runConfirmedDelete<T>(target: T | null, steps: DeleteSteps<T>): Promise<void> {
  if (target === null) return;
  steps.setBusy(true);
  steps.setError(null);
  try {
    await steps.remove(target);
    steps.setTarget(null);
  } catch (err) {
    steps.setError(describeError(err).detail);
  } finally {
    steps.setBusy(false);
    steps.settle();
  }
}
