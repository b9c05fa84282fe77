// Settings → Backup (issue 31 item 4, decision 0041): download one archive of the whole data dir;
// restore one after the server has checked it and said, in plain words, what it replaces. The
// restore is applied when the app next starts; what it replaces is kept in the data folder.

import { useEffect, useRef, useState } from 'react';
import { describeError } from '../../core/errors';
import { backupSummary, backupTime, describeCounts, type BackupCheck, type BackupDescription } from '../../core/machine_room/backup';
import { checkArchive, restoreBackup, stagedRestore } from './backupClient';
import './backupSettings.css';

type Step =
  | { kind: 'idle' }
  | { kind: 'checking'; name: string }
  | { kind: 'checked'; check: BackupCheck }
  | { kind: 'restoring'; check: BackupCheck };

export default function BackupSettings() {
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [error, setError] = useState<string | null>(null);
  const [staged, setStaged] = useState<BackupDescription | null>(null);
  const picker = useRef<HTMLInputElement>(null);

  useEffect(() => {
    let live = true;
    stagedRestore()
      .then((s) => live && setStaged(s))
      .catch(() => undefined); // the section still offers backup and restore
    return () => {
      live = false;
    };
  }, []);

  async function choose(file: File | undefined) {
    if (!file) return;
    setError(null);
    setStep({ kind: 'checking', name: file.name });
    try {
      setStep({ kind: 'checked', check: await checkArchive(file) });
    } catch (err) {
      setError(`${file.name} was not restored: ${describeError(err).detail}`);
      setStep({ kind: 'idle' });
    } finally {
      if (picker.current) picker.current.value = '';
    }
  }

  async function confirm(check: BackupCheck) {
    setError(null);
    setStep({ kind: 'restoring', check });
    try {
      const answer = await restoreBackup(check.token);
      setStaged(answer.backup);
      setStep({ kind: 'idle' });
    } catch (err) {
      setError(`Not restored: ${describeError(err).detail}`);
      setStep({ kind: 'idle' });
    }
  }

  const busy = step.kind === 'checking' || step.kind === 'restoring';
  return (
    <section className="card backup-settings" data-testid="backup-settings" aria-labelledby="backup-title">
      <h2 id="backup-title">Backup</h2>
      <p className="muted">
        One file with your lessons, your graph, practice sets, Workbench results and settings. API keys and
        subscription sign-ins are never in it.
      </p>
      <div className="backup-actions">
        <a className="btn btn-primary" href="/api/backup" download data-testid="backup-download">
          Download a backup
        </a>
        <label className={`btn${busy ? ' disabled' : ''}`}>
          Restore from a backup…
          <input
            ref={picker}
            type="file"
            accept=".zip,application/zip"
            className="visually-hidden"
            data-testid="backup-restore-file"
            disabled={busy}
            onChange={(e) => void choose(e.target.files?.[0])}
          />
        </label>
      </div>
      {step.kind === 'checking' && (
        <p className="muted" role="status" data-testid="backup-checking">
          Checking {step.name}…
        </p>
      )}
      {error && (
        <div className="banner banner-error" role="alert" data-testid="backup-error">
          {error}
        </div>
      )}
      {(step.kind === 'checked' || step.kind === 'restoring') && (
        <div className="backup-check" data-testid="backup-check">
          <p>
            <strong>{backupSummary(step.check)}</strong>
          </p>
          <p>Your data now: {describeCounts(step.check.current)}. Restoring replaces:</p>
          <ul data-testid="backup-replaces">
            {step.check.replaces.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <ul className="muted small">
            {step.check.keeps.map((line) => (
              <li key={line}>{line}</li>
            ))}
            <li>What it replaces is not deleted: it is kept in the data folder, under restore/.</li>
          </ul>
          {step.check.backup.skipped.length > 0 && (
            <details className="small">
              <summary>Notes from the backup ({step.check.backup.skipped.length})</summary>
              <ul>
                {step.check.backup.skipped.map((s) => (
                  <li key={s.path}>
                    {s.path}: {s.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
          <div className="backup-actions">
            <button
              type="button"
              className="btn btn-danger"
              data-testid="backup-restore-confirm"
              disabled={step.kind === 'restoring'}
              onClick={() => void confirm(step.check)}
            >
              {step.kind === 'restoring' ? 'Restoring…' : 'Replace my data with this backup'}
            </button>
            <button
              type="button"
              className="btn"
              data-testid="backup-restore-cancel"
              disabled={step.kind === 'restoring'}
              onClick={() => setStep({ kind: 'idle' })}
            >
              Cancel
            </button>
          </div>
        </div>
      )}
      {staged && (
        <div className="notice" role="status" data-testid="backup-staged">
          The backup from {backupTime(staged.createdAt)} ({describeCounts(staged.counts)}) is ready: restart Learning
          Harness to finish restoring it.
        </div>
      )}
    </section>
  );
}
