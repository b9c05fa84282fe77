import { useState } from 'react';
import { runDraftSave } from '../../core/machine_room/draftSave';

/** What a settings form with a draft needs besides the draft: saving, the error and notice it shows, edit and save. */
export interface DraftSave<D> {
  saving: boolean;
  error: string | null;
  notice: string | null;
  /** Changes part of the draft; the notice and error go. */
  edit: (patch: Partial<D>) => void;
  /** Checks and saves the draft (core/draftSave runDraftSave). */
  save: () => Promise<void>;
}

/**
 * Edit / save for a settings section whose draft (null until loaded) lives in `draft`/`setDraft`:
 * `check` turns it into an update or problems, `put` sends the update, `onSaved` takes what was saved.
 * Discard stays with the caller (it sets the draft back to the saved one).
 */
export function useDraftSave<D extends object, U, R>(
  draft: D | null,
  setDraft: (draft: D) => void,
  check: (draft: D) => { update: U | null; problems: string[] },
  put: (update: U) => Promise<R>,
  onSaved: (saved: R) => void,
): DraftSave<D> {
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const edit = (patch: Partial<D>) => {
    if (draft === null) return;
    setDraft({ ...draft, ...patch });
    setNotice(null);
    setError(null);
  };
  const save = () => runDraftSave(draft, { check, put, onSaved, setSaving, setError, setNotice });
  return { saving, error, notice, edit, save };
}
