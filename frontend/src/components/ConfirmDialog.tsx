import { useEffect, useRef, type ReactNode } from 'react';

interface Props {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
  /** Test ids (defaults: confirm-dialog, confirm-delete, confirm-cancel, confirm-error). */
  testIds?: { dialog?: string; confirm?: string; cancel?: string; error?: string };
}

/** A small modal confirmation (Escape or a click outside cancels). */
export default function ConfirmDialog({ title, children, confirmLabel, busy = false, error = null, onConfirm, onCancel, testIds = {} }: Props) {
  const confirmRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    confirmRef.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onCancel();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onCancel]);

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onCancel()}>
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby="confirm-title" data-testid={testIds.dialog ?? 'confirm-dialog'}>
        <h2 id="confirm-title">{title}</h2>
        <div className="modal-body">{children}</div>
        {error && (
          <p className="error-text" role="alert" data-testid={testIds.error ?? 'confirm-error'}>
            {error}
          </p>
        )}
        <div className="modal-actions">
          <button type="button" className="btn" data-testid={testIds.cancel ?? 'confirm-cancel'} onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="btn btn-danger" data-testid={testIds.confirm ?? 'confirm-delete'} ref={confirmRef} disabled={busy} onClick={onConfirm}>
            {busy ? 'Deleting…' : confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
