// Short, locale-independent timestamps for the session list.

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function sameLocalDay(a: Date, b: Date): boolean {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/**
 * "just now", "5 min ago", "today 14:05", "yesterday 09:30", "3 Mar", "3 Mar 2023".
 * Uses the local time zone; `now` is injectable for tests. Returns "" for an
 * unparseable input.
 */
export function formatRelative(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '';
  const date = new Date(iso);
  const t = date.getTime();
  if (Number.isNaN(t)) return '';
  const diffSec = Math.round((now.getTime() - t) / 1000);
  if (diffSec < 45 && diffSec > -60) return 'just now';
  if (diffSec >= 45 && diffSec < 3600) return `${Math.max(1, Math.round(diffSec / 60))} min ago`;
  const hm = `${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
  if (sameLocalDay(date, now)) return `today ${hm}`;
  const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  if (sameLocalDay(date, yesterday)) return `yesterday ${hm}`;
  const dm = `${date.getDate()} ${MONTHS[date.getMonth()]}`;
  return date.getFullYear() === now.getFullYear() ? dm : `${dm} ${date.getFullYear()}`;
}

/** Full timestamp for a tooltip, e.g. "2025-03-04 14:05". */
export function formatFull(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}
