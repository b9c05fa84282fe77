// Back up and restore the data dir (issue 31 item 4, decision 0041): the shapes the server answers
// and the plain words the Settings section shows. Pure: no fetch, no DOM.

export interface BackupCounts {
  lessons: number;
  propositions: number;
  practiceSets: number;
  jobs: number;
  settings: boolean;
}

export interface BackupDescription {
  createdAt: string;
  app: string;
  version: number;
  counts: BackupCounts;
  /** Files of the backed-up data dir left out of the archive, and why. */
  skipped: { path: string; reason: string }[];
}

/** POST /api/backup/check: what the archive holds and what restoring it replaces. */
export interface BackupCheck {
  token: string;
  backup: BackupDescription;
  current: BackupCounts;
  replaces: string[];
  keeps: string[];
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** "2 lessons, 300 propositions, 1 practice set and 1 Workbench job" (kinds with none left out;
 * "nothing" when every count is zero). */
export function describeCounts(counts: BackupCounts): string {
  const parts = [
    counts.lessons ? plural(counts.lessons, 'lesson', 'lessons') : '',
    counts.propositions ? plural(counts.propositions, 'proposition', 'propositions') : '',
    counts.practiceSets ? plural(counts.practiceSets, 'practice set', 'practice sets') : '',
    counts.jobs ? plural(counts.jobs, 'Workbench job', 'Workbench jobs') : '',
  ].filter(Boolean);
  if (parts.length === 0) return 'nothing';
  if (parts.length === 1) return parts[0];
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** The backup's time as the learner reads it ("6 Dec 2026, 13:00 UTC"); the raw text when it is
 * not a time. */
export function backupTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const date = at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  const time = at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
  return `${date}, ${time} UTC`;
}

/** The one line summing up a checked archive: "This backup from <time> holds <counts>." */
export function backupSummary(check: BackupCheck): string {
  return `This backup from ${backupTime(check.backup.createdAt)} holds ${describeCounts(check.backup.counts)}.`;
}
