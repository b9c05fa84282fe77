// The notes import (POST /api/graph/import) and following its files' progress
// through the activity feed. Pure helpers: what to send, how to batch it, and
// folding a file's activity rows into one status.

import { isRunningRow, partIndex, rowKey, splitLabel, sumRowUsage, sumStats, type ActivityPhase, type ActivityRow, type ActivityStats, type UsageSum } from '../machine_room/activity';

export const NOTE_SUFFIXES = ['.md', '.markdown', '.txt'] as const;
export const NOTE_ACCEPT = NOTE_SUFFIXES.join(',');
/** The server's per-file limit (server/core/library/notes.py MAX_NOTE_BYTES). */
export const MAX_NOTE_BYTES = 2_000_000;

/**
 * `ask`: a single file whose name matches a note of the graph with other content; nothing was
 * done until the learner answers (`NameDecision`). `removed`: what a note said was taken out
 * (a note gone from a picked folder, on the learner's confirmation).
 */
export type ImportAnswerStatus = 'queued' | 'unchanged' | 'running' | 'refused' | 'ask' | 'removed';

/** A note an `ask` answer could replace. */
export interface SameNameNote {
  sourceId: string;
  title: string;
  /** When its source line was written (ISO 8601), '' when unknown. */
  at: string;
}

/** The learner's answer for an `ask` file (multipart field `decisions` of POST /api/graph/import). */
export type NameDecision = { name: string; choice: 'replace'; sourceId: string } | { name: string; choice: 'new' };

/** One file of the import answer. */
export interface ImportFileResult {
  name: string;
  sourceId: string | null;
  status: ImportAnswerStatus;
  detail: string;
  chunks: number;
  /** Set when a file picked by its bare name replaced other content imported under that name
   * ("replaces what the earlier notes.md said"); empty otherwise. */
  replaces: string;
  /** For `ask`: the notes of that name it could replace. */
  sameName: SameNameNote[];
  /** The import the file belongs to (its summary row in the feed); null from an older server. */
  importId: string | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ANSWER_STATUSES: readonly string[] = ['queued', 'unchanged', 'running', 'refused', 'ask', 'removed'];

function normalizeSameName(raw: unknown): SameNameNote[] {
  if (!Array.isArray(raw)) return [];
  const out: SameNameNote[] = [];
  for (const n of raw) {
    if (!isRecord(n) || typeof n.sourceId !== 'string' || !n.sourceId) continue;
    out.push({ sourceId: n.sourceId, title: typeof n.title === 'string' && n.title ? n.title : n.sourceId, at: typeof n.at === 'string' ? n.at : '' });
  }
  return out;
}

/** The `files` of an import answer (202, or the 400 "every file refused"), read defensively. */
export function normalizeImportFiles(raw: unknown): ImportFileResult[] {
  const files = isRecord(raw) && Array.isArray(raw.files) ? raw.files : [];
  const importId = isRecord(raw) && typeof raw.importId === 'string' && raw.importId ? raw.importId : null;
  const out: ImportFileResult[] = [];
  for (const f of files) {
    if (!isRecord(f) || typeof f.name !== 'string') continue;
    const status = typeof f.status === 'string' && ANSWER_STATUSES.includes(f.status) ? (f.status as ImportAnswerStatus) : 'refused';
    out.push({
      name: f.name,
      sourceId: typeof f.sourceId === 'string' && f.sourceId ? f.sourceId : null,
      status,
      detail: typeof f.detail === 'string' ? f.detail : '',
      chunks: typeof f.chunks === 'number' && Number.isFinite(f.chunks) ? f.chunks : 0,
      replaces: typeof f.replaces === 'string' ? f.replaces : '',
      sameName: normalizeSameName(f.sameName),
      importId,
    });
  }
  return out;
}

/**
 * The server's detail starts with the file's name ("empty.md: the file is
 * empty…"); the UI shows the name next to it, so drop that prefix and start
 * with a capital letter.
 */
export function plainDetail(name: string, detail: string): string {
  let text = detail.trim();
  const base = name.split('/').pop() ?? name;
  for (const prefix of [`${name}:`, `${base}:`]) {
    if (text.startsWith(prefix)) {
      text = text.slice(prefix.length).trim();
      break;
    }
  }
  return capitalize(text);
}

function capitalize(text: string): string {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** The question for an `ask` file, in plain words. */
export function askWords(result: Pick<ImportFileResult, 'name' | 'sameName'>): string {
  const n = result.sameName.length;
  const which = n === 1 ? 'A note' : `${n} notes`;
  return `${which} named ${result.name} ${n === 1 ? 'is' : 'are'} already in your graph with other content. Does this file replace ${n === 1 ? 'it' : 'one of them'}, or is it a new note? Nothing is imported until you say.`;
}

/** "imported 6 Dec 2026" for a same-named note (from its ISO time), or '' when unknown. */
export function importedOn(at: string): string {
  const when = at ? new Date(at) : null;
  if (!when || Number.isNaN(when.getTime())) return '';
  return `imported ${when.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })}`;
}

// ---------------------------------------------------------------------------
// Notes gone from a folder picked again (POST /api/graph/import/gone)

/** A note imported from a picked folder that the folder holds no more. */
export interface GoneNote {
  sourceId: string;
  path: string;
  title: string;
  /** Propositions of the graph it is a source of. */
  propositions: number;
}

export function normalizeGone(raw: unknown): GoneNote[] {
  const list = isRecord(raw) && Array.isArray(raw.gone) ? raw.gone : [];
  const out: GoneNote[] = [];
  for (const g of list) {
    if (!isRecord(g) || typeof g.sourceId !== 'string' || !g.sourceId) continue;
    const path = typeof g.path === 'string' ? g.path : '';
    out.push({
      sourceId: g.sourceId,
      path: path || g.sourceId,
      title: typeof g.title === 'string' && g.title ? g.title : path || g.sourceId,
      propositions: typeof g.propositions === 'number' && Number.isFinite(g.propositions) ? g.propositions : 0,
    });
  }
  return out;
}

/**
 * The folders a pick's files came from: the first segment of each relative path
 * ("vault/sub/a.md" is in "vault"), in order, each once. Bare names (single files) have none.
 */
export function folderRoots(paths: readonly string[]): string[] {
  const roots: string[] = [];
  for (const p of paths) {
    const cut = p.indexOf('/');
    if (cut <= 0) continue;
    const root = p.slice(0, cut);
    if (!roots.includes(root)) roots.push(root);
  }
  return roots;
}

/** The confirmation's words: "2 notes are no longer in vault: what they said (7 propositions) is still in your graph." */
export function goneWords(gone: readonly GoneNote[], roots: readonly string[]): string {
  const n = gone.length;
  const props = gone.reduce((sum, g) => sum + g.propositions, 0);
  const where = roots.length === 1 ? roots[0] : 'the folders you picked';
  const said = props ? ` (${props} proposition${props === 1 ? '' : 's'})` : '';
  return `${n} note${n === 1 ? ' is' : 's are'} no longer in ${where}: what ${n === 1 ? 'it' : 'they'} said${said} is still in your graph.`;
}

// ---------------------------------------------------------------------------
// Choosing files

export function hasNoteSuffix(path: string): boolean {
  const lower = path.toLowerCase();
  return NOTE_SUFFIXES.some((s) => lower.endsWith(s));
}

/** A path with a hidden segment (".obsidian/…", ".DS_Store"): skipped when a folder is imported. */
export function isHiddenPath(path: string): boolean {
  return path.split('/').some((seg) => seg.startsWith('.') && seg !== '.' && seg !== '..');
}

/** The name to send for a file: its relative path inside a picked folder when there is one. */
export function uploadName(file: { name: string; webkitRelativePath?: string }): string {
  const rel = file.webkitRelativePath ?? '';
  return rel.trim() ? rel : file.name;
}

/** A path from a dropped folder entry ("/notes/a.md") as the upload name ("notes/a.md"). */
export function entryPath(fullPath: string, fallback: string): string {
  const p = fullPath.replace(/^\/+/, '');
  return p || fallback;
}

/**
 * From a folder (picked or dropped), keep the notes files; the rest is skipped
 * here rather than sent to be refused one by one (a folder often holds images,
 * app settings, …). Single files the user chose are all sent: the server says why
 * it refuses one.
 */
export function splitFolderFiles<T extends { path: string }>(files: readonly T[]): { keep: T[]; skipped: T[] } {
  const keep: T[] = [];
  const skipped: T[] = [];
  for (const f of files) {
    if (hasNoteSuffix(f.path) && !isHiddenPath(f.path)) keep.push(f);
    else skipped.push(f);
  }
  return { keep, skipped };
}

/**
 * Split picks by the server's per-file limit (`MAX_NOTE_BYTES`, decimal bytes:
 * 2.0 MB is 2,000,000 bytes, not 2 MiB): files over it are refused at pick
 * time, never sent.
 */
export function splitBySize<T extends { file: { size: number } }>(
  picks: readonly T[],
  maxBytes: number = MAX_NOTE_BYTES,
): { keep: T[]; tooLarge: T[] } {
  const keep: T[] = [];
  const tooLarge: T[] = [];
  for (const p of picks) (p.file.size > maxBytes ? tooLarge : keep).push(p);
  return { keep, tooLarge };
}

/** A size shown next to a limit: exact bytes when rounding would make it read as the limit. */
export function formatSizeOver(size: number, maxBytes: number = MAX_NOTE_BYTES): string {
  const shown = formatBytes(size);
  return shown === formatBytes(maxBytes) ? `${size.toLocaleString('en-US')} bytes` : shown;
}

/** Add picks to a selection; a path chosen again replaces the earlier pick (in place). */
export function mergePicks<T extends { path: string }>(current: readonly T[], added: readonly T[]): T[] {
  const out = [...current];
  for (const pick of added) {
    const at = out.findIndex((p) => p.path === pick.path);
    if (at === -1) out.push(pick);
    else out[at] = pick;
  }
  return out;
}

/**
 * Group files (by their sizes) into upload batches of at most `maxCount` files
 * and about `maxBytes` (a single larger file gets a batch of its own).
 * Returns index lists, in order.
 */
export function batchBySize(sizes: readonly number[], maxCount: number, maxBytes: number): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  sizes.forEach((size, i) => {
    if (current.length && (current.length >= maxCount || bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(i);
    bytes += size;
  });
  if (current.length) batches.push(current);
  return batches;
}

/** "1.2 MB", "34 KB", "512 bytes". */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} byte${n === 1 ? '' : 's'}`;
  if (n < 1_000_000) return `${Math.round(n / 1000)} KB`;
  return `${(n / 1_000_000).toFixed(1)} MB`;
}

// ---------------------------------------------------------------------------
// Following a file's run through the activity feed

/** Phases of rows when the import was posted (rowKey -> phase), or null when unknown. */
export type Baseline = ReadonlyMap<string, ActivityPhase>;

export function makeBaseline(rows: readonly ActivityRow[]): Baseline {
  return new Map(rows.map((r) => [rowKey(r), r.phase]));
}

/**
 * The rows of the run an import started (or joined) for `sourceId`, sorted by part.
 *
 * - A new run ("queued"): the source's rows that were not in the feed when the
 *   import was posted (a re-run of a chunk keeps its id but gets a new start).
 * - A run already under way ("running"): the rows of that run, i.e. those
 *   started no earlier than its rows that were still running then (a source's
 *   runs never overlap, so earlier, ended runs of the same file are left out).
 *
 * Without a baseline every row of the source counts.
 */
export function runRows(rows: readonly ActivityRow[], sourceId: string, baseline: Baseline | null): ActivityRow[] {
  const source = rows.filter((r) => r.source === sourceId);
  if (!baseline) return sortByPart(source);
  let since: string | null = null;
  for (const r of source) {
    const before = baseline.get(rowKey(r));
    if (before !== undefined && isRunningRow({ phase: before }) && (since === null || r.queuedAt < since)) since = r.queuedAt;
  }
  return sortByPart(source.filter((r) => !baseline.has(rowKey(r)) || (since !== null && r.queuedAt >= since)));
}

function sortByPart(rows: ActivityRow[]): ActivityRow[] {
  return rows.sort((a, b) => (partIndex(a) ?? 0) - (partIndex(b) ?? 0));
}

/**
 * A file's state in the results list:
 * - refused / unchanged: the import answer says so (nothing runs);
 * - queued: accepted, no part started yet;
 * - running: some part is being worked on;
 * - done: every part is done; failed: a part errored (others may still run);
 * - aborted: stopped before the end; lost: accepted but no activity was ever seen
 *   (e.g. the server restarted);
 * - removed: what it said was taken out (a note gone from a folder, as the learner confirmed);
 * - ask: waits for the learner's answer (a same-named file with other content).
 */
export type FileState = 'refused' | 'unchanged' | 'queued' | 'running' | 'done' | 'failed' | 'aborted' | 'lost' | 'removed' | 'ask';

export interface FileProgress {
  state: FileState;
  /** Parts done / parts in the run (0/0 when no rows). */
  done: number;
  total: number;
  /** Parts not ended yet. */
  active: number;
  /** The phase of the part being worked on (null when none is). */
  phase: ActivityPhase | null;
  /** 1-based part being worked on (null when none). */
  current: number | null;
  /** Parts of the run as its labels count them (at least `total`). */
  parts: number;
  errors: string[];
  usage: UsageSum;
  stats: ActivityStats;
  /** Nothing more will change: no need to poll for this file. */
  settled: boolean;
}

/**
 * What an import's summary row says of a file whose rows are not in the feed: its outcome
 * (its rows were folded into the summary), or that it still waits for its turn (a big import
 * makes a file's rows only when its run starts). Null when the summary is not in the feed.
 */
export interface Folded {
  outcome: 'done' | 'failed' | 'aborted' | null;
  error: string | null;
  /** The import is still going (a file without rows or outcome is waiting). */
  busy: boolean;
}

export function foldedState(summary: ActivityRow | undefined, sourceId: string | null): Folded | null {
  if (!summary || summary.kind !== 'import' || !sourceId) return null;
  const raw = summary.outcomes?.[sourceId];
  const outcome = raw === 'done' || raw === 'failed' || raw === 'aborted' ? raw : null;
  return { outcome, error: summary.errors?.[sourceId] ?? null, busy: isRunningRow(summary) };
}

/** Polls without seeing any row of an accepted file before it counts as lost. */
export const LOST_AFTER_POLLS = 3;

/**
 * Fold an import answer and its run's rows into one state.
 *
 * @param pollsSince activity answers received since the import was posted.
 */
export function fileProgress(
  result: Pick<ImportFileResult, 'status'>,
  rows: readonly ActivityRow[],
  pollsSince: number,
  folded: Folded | null = null,
): FileProgress {
  const done = rows.filter((r) => r.phase === 'done').length;
  const activeRows = rows.filter(isRunningRow);
  const working = activeRows.find((r) => r.phase !== 'queued') ?? null;
  const errors = rows.filter((r) => r.phase === 'error').map((r) => r.error ?? 'This part failed.');
  const base = {
    done,
    total: rows.length,
    active: activeRows.length,
    phase: working?.phase ?? (activeRows.length ? 'queued' : null),
    current: working ? partIndex(working) : null,
    parts: Math.max(rows.length, ...rows.map((r) => splitLabel(r.label).total ?? 0)),
    errors,
    usage: sumRowUsage(rows),
    stats: sumStats(rows),
  };
  if (result.status === 'refused' || result.status === 'unchanged' || result.status === 'removed' || result.status === 'ask') {
    return { ...base, state: result.status, settled: true };
  }
  if (rows.length === 0 && folded?.outcome) {
    const state = folded.outcome === 'done' ? 'done' : folded.outcome;
    const errors = folded.outcome === 'failed' ? [folded.error ?? 'This file failed.'] : [];
    return { ...base, errors, state, settled: true };
  }
  if (rows.length === 0 && folded?.busy) return { ...base, state: 'queued', settled: false };
  if (rows.length === 0) {
    const lost = pollsSince >= LOST_AFTER_POLLS;
    return { ...base, state: lost ? 'lost' : 'queued', settled: lost };
  }
  const settled = activeRows.length === 0;
  let state: FileState;
  if (errors.length) state = 'failed';
  else if (rows.some((r) => r.phase === 'aborted')) state = 'aborted';
  else if (done === rows.length) state = 'done';
  else if (working || done > 0) state = 'running';
  else state = 'queued';
  return { ...base, state, settled };
}

/** A one-line summary of a file's progress ("Part 2 of 5: reading", "Done: 5 parts", …). */
export function progressWords(p: FileProgress, phaseWords: (phase: ActivityPhase) => string): string {
  switch (p.state) {
    case 'queued':
      return p.total > 1 ? `Waiting to start (${p.total} parts)` : 'Waiting to start';
    case 'running':
      if (p.current !== null && p.phase) return p.parts > 1 ? `Part ${p.current} of ${p.parts}: ${phaseWords(p.phase)}` : capitalize(phaseWords(p.phase));
      return `${p.done} of ${p.total} parts done`;
    case 'done':
      if (p.total === 0) return 'Done: merged into your graph';
      return p.total > 1 ? `Done: all ${p.total} parts merged` : 'Done: merged into your graph';
    case 'failed': {
      if (p.total === 0) return 'Failed';
      const failed = p.errors.length;
      const head = p.total > 1 ? `${failed} of ${p.total} parts failed` : 'Failed';
      return p.active ? `${head} (the other parts carry on)` : head;
    }
    case 'aborted':
      return p.total > 1 ? `Aborted after ${p.done} of ${p.total} parts` : 'Aborted';
    case 'lost':
      return 'No progress was reported for this file (was the server restarted?). Import it again to retry.';
    case 'unchanged':
      return 'Unchanged';
    case 'refused':
      return 'Refused';
    case 'removed':
      return 'Removed: what it said is taken out of your graph';
    case 'ask':
      return 'Waiting for your answer';
  }
}

// ---------------------------------------------------------------------------
// The graph's sources (GET /api/graph/sources)

export interface GraphSource {
  id: string;
  /** null when the server has no title for it. */
  title: string | null;
  kind: 'chat' | 'notes' | null;
  propositions: number;
}

export function normalizeSources(raw: unknown): GraphSource[] {
  const list = isRecord(raw) && Array.isArray(raw.sources) ? raw.sources : [];
  const out: GraphSource[] = [];
  for (const s of list) {
    if (!isRecord(s) || typeof s.id !== 'string') continue;
    out.push({
      id: s.id,
      title: typeof s.title === 'string' && s.title.trim() ? s.title : null,
      kind: s.kind === 'chat' || s.kind === 'notes' ? s.kind : null,
      propositions: typeof s.propositions === 'number' && Number.isFinite(s.propositions) ? s.propositions : 0,
    });
  }
  return out;
}

/**
 * An earlier import's badge from its activity summary row (trial finding 4): a
 * batch whose files all failed is "Failed", one with some failures "Finished
 * with failures", never a green "Finished" over failed files. `state` is the
 * badge's CSS state (libraryPage.css).
 */
export function earlierImportBadge(row: {
  phase: string;
  counts?: Record<string, number>;
}): { state: 'running' | 'done' | 'failed' | 'aborted'; text: string } {
  const failed = row.counts?.failed ?? 0;
  if (row.phase === 'error') return { state: 'failed', text: 'Failed' };
  if (row.phase === 'aborted') return { state: 'aborted', text: 'Stopped' };
  if (row.phase !== 'done') return { state: 'running', text: 'Running' };
  return failed > 0 ? { state: 'failed', text: 'Finished with failures' } : { state: 'done', text: 'Finished' };
}
