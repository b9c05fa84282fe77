// One Save of a settings form's draft, as the knowledge-graph and web-research sections run it.
import { describeError } from '../errors';

/** Where a save writes as it goes (React state setters in the hook, recorders in the tests). */
export interface DraftSaveSteps<D, U, R> {
  /** The draft checked: the update to send, or null and the problems in plain words. */
  check: (draft: D) => { update: U | null; problems: string[] };
  /** Sends the update; resolves with the settings as saved, rejects with the failure. */
  put: (update: U) => Promise<R>;
  /** Takes the saved settings (the draft starts over from them). */
  onSaved: (saved: R) => void;
  setSaving: (saving: boolean) => void;
  setError: (error: string | null) => void;
  setNotice: (notice: string | null) => void;
}

/**
 * Saves `draft` (nothing when it is null): a draft that fails its check shows its problems joined
 * by spaces and sends nothing; otherwise saving on, error cleared, the update sent, then the saved
 * settings taken and "Saved." shown, or the failure's plain-words detail (core/errors describeError)
 * shown; saving off either way.
 */
export async function runDraftSave<D, U, R>(draft: D | null, steps: DraftSaveSteps<D, U, R>): Promise<void> {
  if (draft === null) return;
  const { update, problems } = steps.check(draft);
  if (!update) {
    steps.setError(problems.join(' '));
    return;
  }
  steps.setSaving(true);
  steps.setError(null);
  try {
    steps.onSaved(await steps.put(update));
    steps.setNotice('Saved.');
  } catch (err) {
    steps.setError(describeError(err).detail);
  } finally {
    steps.setSaving(false);
  }
}
