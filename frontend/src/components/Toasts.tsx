import { useEffect, useState } from 'react';
import { currentToasts, dismissToast, subscribeToasts, type Toast } from '../core/toasts';

/** One toast: its text, its action (Undo) and a close button; it goes when its time is up. */
function ToastRow({ toast }: { toast: Toast }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const timer = window.setTimeout(() => dismissToast(toast.id), toast.ms);
    return () => window.clearTimeout(timer);
  }, [toast.id, toast.ms]);
  const run = async () => {
    if (!toast.action) return;
    setBusy(true);
    try {
      await toast.action.run();
      dismissToast(toast.id);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <div className="toast" role="status" data-testid="toast">
      <span className="toast-text">{error ?? toast.text}</span>
      {toast.action && !error && (
        <button type="button" className="btn btn-small toast-action" data-testid="toast-action" disabled={busy} onClick={() => void run()}>
          {toast.action.label}
        </button>
      )}
      <button type="button" className="btn btn-small toast-close" aria-label="Close" onClick={() => dismissToast(toast.id)}>
        ×
      </button>
    </div>
  );
}

/** The page's toasts (core/toasts), bottom left, newest last. */
export default function Toasts() {
  const [toasts, setToasts] = useState(currentToasts());
  useEffect(() => subscribeToasts(setToasts), []);
  if (toasts.length === 0) return null;
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <ToastRow key={t.id} toast={t} />
      ))}
    </div>
  );
}
