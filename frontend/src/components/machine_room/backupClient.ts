// Settings → Backup's calls (issue 31 item 4, decision 0041): check an archive, stage its restore,
// and ask whether a restore waits for the next start. The download itself is a plain link to
// GET /api/backup (the server streams the file).

import { ApiError } from '../../core/errors';
import type { BackupCheck, BackupDescription } from '../../core/machine_room/backup';

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('accept', 'application/json');
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) throw new ApiError(res.status, await res.text().catch(() => ''));
  return (await res.json()) as T;
}

/** POST /api/backup/check: nothing is changed; a refused archive throws ApiError with the reason. */
export function checkArchive(file: File): Promise<BackupCheck> {
  const form = new FormData();
  form.append('archive', file, file.name);
  return call<BackupCheck>('/api/backup/check', { method: 'POST', body: form });
}

/** POST /api/backup/restore: the checked archive is staged for the next start. */
export function restoreBackup(token: string): Promise<{ staged: boolean; restartRequired: boolean; backup: BackupDescription }> {
  return call('/api/backup/restore', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, confirmed: true }),
  });
}

/** GET /api/backup/restore: the backup a restore waits with, or null. */
export async function stagedRestore(): Promise<BackupDescription | null> {
  const answer = await call<{ staged: BackupDescription | null }>('/api/backup/restore');
  return answer.staged;
}
