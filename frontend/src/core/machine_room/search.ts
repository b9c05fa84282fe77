// Search everything from the sidebar (issue 31 item 5, decision 0044): the answer of
// GET /api/search read defensively, the words a result shows, and how much of a long transcript
// must be drawn for a found message to be on the page. Pure: no DOM, no fetch.

export type SearchKind = 'lesson' | 'message' | 'proposition' | 'practice' | 'problem';

export interface SnippetRun {
  text: string;
  match: boolean;
}

export interface SearchResult {
  kind: SearchKind;
  id: string;
  target: string;
  label: string;
  href: string;
  snippet: SnippetRun[];
}

const KINDS: ReadonlySet<string> = new Set(['lesson', 'message', 'proposition', 'practice', 'problem']);

/** The results of a GET /api/search answer; anything malformed is left out (never thrown). A
 * result's address must be the page's own (a path starting with one `/`). */
export function readResults(raw: unknown): SearchResult[] {
  const results = (raw as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return [];
  const out: SearchResult[] = [];
  for (const r of results) {
    if (!r || typeof r !== 'object') continue;
    const { kind, id, target, label, href, snippet } = r as Record<string, unknown>;
    if (typeof kind !== 'string' || !KINDS.has(kind) || typeof id !== 'string' || typeof href !== 'string') continue;
    if (!href.startsWith('/') || href.startsWith('//')) continue;
    const runs = Array.isArray(snippet)
      ? snippet
          .filter((s): s is SnippetRun => !!s && typeof (s as SnippetRun).text === 'string')
          .map((s) => ({ text: s.text, match: s.match === true }))
      : [];
    out.push({
      kind: kind as SearchKind,
      id,
      target: typeof target === 'string' ? target : '',
      label: typeof label === 'string' && label ? label : 'Untitled',
      href,
      snippet: runs,
    });
  }
  return out;
}

/** False when the server says its index is still being filled (the results are what it has
 * indexed so far); true otherwise. */
export function readComplete(raw: unknown): boolean {
  return (raw as { complete?: unknown } | null)?.complete !== false;
}

/** What a result is, in the learner's words. */
export function kindWord(kind: SearchKind): string {
  switch (kind) {
    case 'lesson':
      return 'Lesson';
    case 'message':
      return 'In a lesson';
    case 'proposition':
      return 'Proposition';
    case 'practice':
      return 'Practice set';
    case 'problem':
      return 'Practice problem';
  }
}

/** How many messages from the end a windowed transcript must draw to include message `index` of
 * `total` (at least 1). */
export function windowToShow(total: number, index: number): number {
  if (index < 0 || index >= total) return 1;
  return total - index;
}

/** The query worth sending: trimmed; null when it has no letter or digit (the server would find
 * nothing), and cut at the server's 200 characters. */
export function searchText(input: string): string | null {
  const text = input.slice(0, 200);
  return /[\p{L}\p{N}]/u.test(text) ? text : null;
}
