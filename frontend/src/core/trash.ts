/**
 * The trash (issue 31 item 6, decision 0043): what GET /api/trash answers, normalized, and the
 * words the page shows for it. Pure; the calls are in api.ts, the section is TrashSettings.tsx.
 */

export type TrashKind = 'lesson' | 'practiceSet';

/** One trashed record: `id` is the lesson's or set's own id; times are ISO-8601 UTC. */
export interface TrashEntry {
  id: string;
  kind: TrashKind;
  title: string;
  deletedAt: string;
  purgeAt: string;
}

/** GET /api/trash: entries newest deletion first, and how many days an entry is kept. */
export interface TrashList {
  entries: TrashEntry[];
  days: number;
}

/** The server's answer as the page uses it: entries without an id or a known kind are left out. */
export function normalizeTrash(data: unknown): TrashList {
  const raw = (data ?? {}) as { entries?: unknown; days?: unknown };
  const entries: TrashEntry[] = [];
  for (const item of Array.isArray(raw.entries) ? raw.entries : []) {
    const e = (item ?? {}) as Record<string, unknown>;
    if (typeof e.id !== 'string' || !e.id || (e.kind !== 'lesson' && e.kind !== 'practiceSet')) continue;
    entries.push({
      id: e.id,
      kind: e.kind,
      title: typeof e.title === 'string' ? e.title : '',
      deletedAt: typeof e.deletedAt === 'string' ? e.deletedAt : '',
      purgeAt: typeof e.purgeAt === 'string' ? e.purgeAt : '',
    });
  }
  const days = typeof raw.days === 'number' && raw.days > 0 ? raw.days : 30;
  return { entries, days };
}

/** What the record is called in a sentence: "lesson" or "problem set". */
export function kindWord(kind: TrashKind): string {
  return kind === 'lesson' ? 'lesson' : 'problem set';
}

/** The record's title, or what it is when it has none. */
export function entryTitle(entry: Pick<TrashEntry, 'kind' | 'title'>): string {
  return entry.title.trim() || (entry.kind === 'lesson' ? 'Untitled lesson' : 'Untitled problem set');
}

/** Whole days left before `purgeAt` at `now` (ms since the epoch), never below 0; null when unreadable. */
export function daysLeft(purgeAt: string, now: number): number | null {
  const at = Date.parse(purgeAt);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 86_400_000));
}

/** The line under an entry in Settings, e.g. "Lesson · removed for good in 29 days". */
export function entryLine(entry: TrashEntry, now: number): string {
  const kind = entry.kind === 'lesson' ? 'Lesson' : 'Problem set';
  const left = daysLeft(entry.purgeAt, now);
  if (left === null) return kind;
  if (left === 0) return `${kind} · removed for good today`;
  return `${kind} · removed for good in ${left} day${left === 1 ? '' : 's'}`;
}

/** The toast after a deletion: what went and where it is kept. */
export function deletedToast(kind: TrashKind, title: string, days = 30): string {
  return `Deleted “${entryTitle({ kind, title })}”. It stays in the trash for ${days} days (Settings → Trash).`;
}
