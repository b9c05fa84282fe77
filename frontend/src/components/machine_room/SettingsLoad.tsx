import { useEffect, useState } from 'react';
import { describeError } from '../../core/errors';

/** A settings section's load: fetches once (and again on `retry`), hands the result to `loaded`,
 *  and keeps the load error (in plain words) for `SettingsLoading`. */
export function useSettingsLoad<T>(fetch: () => Promise<T>, loaded: (value: T) => void) {
  const [loadError, setLoadError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let cancelled = false;
    fetch().then(
      (value) => {
        if (cancelled) return;
        loaded(value);
        setLoadError(null);
      },
      (err: unknown) => {
        if (!cancelled) setLoadError(describeError(err).detail);
      },
    );
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- one load per attempt
  }, [attempt]);
  return { loadError, retry: () => setAttempt((n) => n + 1) };
}

/** The section's card while its settings load, or why they could not, with Try again. */
export function SettingsLoading(props: { title: string; testId: string; loadError: string | null; retry: () => void }) {
  return (
    <section className="card" data-testid={props.testId}>
      <h2>{props.title}</h2>
      {props.loadError ? (
        <p className="error-text" role="alert">
          Could not load these settings: {props.loadError}{' '}
          <button type="button" className="btn btn-small" onClick={props.retry}>
            Try again
          </button>
        </p>
      ) : (
        <p className="muted">Loading…</p>
      )}
    </section>
  );
}

/** A settings form's foot: the error banner, Save, Discard changes, and the saved notice. */
export function SettingsActions(props: {
  testId: string;
  error: string | null;
  notice: string | null;
  saving: boolean;
  dirty: boolean;
  onDiscard: () => void;
}) {
  const { testId, error, notice, saving, dirty, onDiscard } = props;
  return (
    <>
      {error && (
        <div className="banner banner-error" role="alert" data-testid={`${testId}-error`}>
          {error}
        </div>
      )}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" data-testid={`${testId}-save`} disabled={saving || !dirty}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        {dirty && !saving && (
          <button type="button" className="btn" onClick={onDiscard}>
            Discard changes
          </button>
        )}
        {notice && !dirty && (
          <span className="notice" data-testid={`${testId}-saved`}>
            {notice}
          </span>
        )}
      </div>
    </>
  );
}
