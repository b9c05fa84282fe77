// The background activity feed (GET /api/activity): extraction jobs of lessons
// and notes files, practice jobs, and the lessons' background agents (kind job: the
// Workbench's research, demo and visual workers while they compute), one row per job. Pure helpers: reading rows defensively,
// phases in plain words, usage with unknowns (never shown as 0).

import { formatCost, formatCount, formatTokens } from '../usage';

export const ACTIVITY_PHASES = [
  'queued',
  'running',
  'extracting',
  'waiting',
  'auditing',
  'merging',
  'partitioning',
  'generating',
  'grading',
  'done',
  'error',
  'aborted',
] as const;
export type ActivityPhase = (typeof ACTIVITY_PHASES)[number];

export const TERMINAL_PHASES: readonly ActivityPhase[] = ['done', 'error', 'aborted'];

export interface ActivityUsage {
  /** null = unknown. */
  inputTokens: number | null;
  outputTokens: number | null;
  requests: number;
  costUsd: number | null;
  /** The model id the job ran (its role's model, issue 30 item 2); absent when not known. */
  model?: string;
}

export interface ActivityStats {
  addedNodes: number;
  linkedNodes: number;
  addedChains: number;
  droppedChains: number;
}

/** A packed note's pack (decision 0023): the notes one extractor call read together, and the
 * pack's model calls (its extractor call and its audit, shared by its notes). */
export interface ActivityPack {
  notes: number;
  requests: number;
}

export const JOB_ROW_KINDS = ['research', 'demo', 'visual'] as const;
export type JobRowKind = (typeof JOB_ROW_KINDS)[number];

export interface ActivityRow {
  id: string;
  source: string;
  kind: 'chat' | 'notes' | 'practice' | 'job' | 'import';
  /** Kind job: which worker (research, demo, visual). */
  jobKind?: JobRowKind;
  /** Kind job: the lesson that started it. */
  chatId?: string;
  /** e.g. "notes.md · 2/5" (just the title for a one-part source). */
  label: string;
  phase: ActivityPhase;
  error: string | null;
  usage: ActivityUsage;
  /** When the job was queued: with the id, the identity of one run of one job. */
  queuedAt: string;
  /** When it began extracting (null while it waits for a model-call permit). */
  startedAt: string | null;
  endedAt: string | null;
  stats: Partial<ActivityStats>;
  /** Kind import (one summary row per import): files by outcome (waiting, running, done,
   * failed, aborted, unchanged, refused, removed). */
  counts?: Record<string, number>;
  /** Kind import: each ended file's outcome (done / failed / aborted) by source id; its rows
   * may have been folded into this row. */
  outcomes?: Record<string, string>;
  /** Kind import: the first error of each failed file, by source id. */
  errors?: Record<string, string>;
  /** An import summary's refused files: file name -> why it was refused (trial finding 4). */
  refusals?: Record<string, string>;
  /** A notes row read in a pack: its usage is its share of the pack's (by its tokens). */
  pack?: ActivityPack;
}

function numberRecord(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return out;
}

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback;
}

export function isActivityPhase(value: unknown): value is ActivityPhase {
  return typeof value === 'string' && (ACTIVITY_PHASES as readonly string[]).includes(value);
}

export function isTerminalPhase(phase: ActivityPhase): boolean {
  return TERMINAL_PHASES.includes(phase);
}

/** A job that has not ended yet (queued or working). */
export function isRunningRow(row: Pick<ActivityRow, 'phase'>): boolean {
  return !isTerminalPhase(row.phase);
}

export function countRunning(rows: readonly Pick<ActivityRow, 'phase'>[] | null | undefined): number {
  return (rows ?? []).filter(isRunningRow).length;
}

/** Phases of an unfinished job that waits: for a model-call permit (queued), or for its turn
 * to merge after its model call (waiting). */
const WAITING_PHASES: readonly ActivityPhase[] = ['queued', 'waiting'];

/**
 * The unfinished jobs in words, working apart from waiting ("1 job working · 4 waiting",
 * "Nothing running"): a job waiting for a permit or its turn to merge is not said to run
 * (issue 28 item 7). An import's summary row is not a job (its files' rows are counted).
 */
export function runningWords(rows: readonly Pick<ActivityRow, 'phase' | 'kind'>[] | null | undefined): string {
  const open = (rows ?? []).filter((r) => r.kind !== 'import' && isRunningRow(r));
  if (open.length === 0) return 'Nothing running';
  const waiting = open.filter((r) => WAITING_PHASES.includes(r.phase)).length;
  const working = open.length - waiting;
  const parts = working ? [`${formatCount(working)} job${working === 1 ? '' : 's'} working`] : [];
  if (waiting) parts.push(working ? `${formatCount(waiting)} waiting` : `${formatCount(waiting)} job${waiting === 1 ? '' : 's'} waiting`);
  return parts.join(' · ');
}

/** Read one row; null for anything that is not a row (no id or source, unknown phase). */
export function normalizeActivityRow(raw: unknown): ActivityRow | null {
  if (!isRecord(raw)) return null;
  const { id, source, phase } = raw;
  if (typeof id !== 'string' || typeof source !== 'string' || !isActivityPhase(phase)) return null;
  const usage = isRecord(raw.usage) ? raw.usage : {};
  const stats: Partial<ActivityStats> = {};
  if (isRecord(raw.stats)) {
    for (const key of ['addedNodes', 'linkedNodes', 'addedChains', 'droppedChains'] as const) {
      const n = numberOrNull(raw.stats[key]);
      if (n !== null) stats[key] = n;
    }
  }
  const error = typeof raw.error === 'string' && raw.error.trim() ? raw.error : null;
  const kind = raw.kind === 'chat' || raw.kind === 'practice' || raw.kind === 'job' || raw.kind === 'import' ? raw.kind : 'notes';
  const summary: Pick<ActivityRow, 'counts' | 'outcomes' | 'errors' | 'refusals'> =
    kind === 'import'
      ? {
          counts: numberRecord(raw.counts),
          outcomes: stringRecord(raw.outcomes),
          errors: stringRecord(raw.errors),
          refusals: stringRecord(raw.refusals),
        }
      : {};
  const packed: Pick<ActivityRow, 'pack'> = {};
  if (isRecord(raw.pack)) {
    const notes = numberOrNull(raw.pack.notes);
    const requests = numberOrNull(raw.pack.requests);
    if (notes !== null && notes > 0 && requests !== null) packed.pack = { notes, requests };
  }
  const job: Pick<ActivityRow, 'jobKind' | 'chatId'> = {};
  if (kind === 'job') {
    if ((JOB_ROW_KINDS as readonly unknown[]).includes(raw.jobKind)) job.jobKind = raw.jobKind as JobRowKind;
    if (typeof raw.chatId === 'string' && raw.chatId) job.chatId = raw.chatId;
  }
  return {
    id,
    source,
    kind,
    ...job,
    label: stringOr(raw.label, source),
    phase,
    error,
    usage: {
      inputTokens: numberOrNull(usage.inputTokens),
      outputTokens: numberOrNull(usage.outputTokens),
      requests: numberOrNull(usage.requests) ?? 0,
      costUsd: numberOrNull(usage.costUsd),
      ...(typeof usage.model === 'string' && usage.model.trim() ? { model: usage.model.trim() } : {}),
    },
    queuedAt: stringOr(raw.queuedAt, stringOr(raw.startedAt, '')),
    startedAt: stringOr(raw.startedAt, null),
    endedAt: stringOr(raw.endedAt, null),
    stats,
    ...summary,
    ...packed,
  };
}

/** An import summary's counts in the order said. A file is `reading` only while a model call
 * reads it, `merging` while it is checked against the graph or merged, and `waiting` while it
 * waits to start, for a model-call permit, or for its turn to merge (issue 28 item 7); the
 * server's `running` (reading + merging) is not said beside them. */
const COUNT_WORDS: readonly [string, string][] = [
  ['done', 'done'],
  ['failed', 'failed'],
  ['reading', 'reading'],
  ['merging', 'merging'],
  ['waiting', 'waiting'],
  ['aborted', 'aborted'],
  ['unchanged', 'unchanged'],
  ['refused', 'refused'],
  ['removed', 'removed'],
];

/** An import summary's counts in words ("412 done · 3 failed · 780 waiting"); zeros left out. */
export function importCountsWords(counts: Record<string, number> | undefined): string {
  const c = counts ?? {};
  // a summary that does not split its running files says them as working, never as reading
  const unsplit = c.reading === undefined && c.merging === undefined;
  const words: readonly (readonly [string, string])[] = unsplit ? [...COUNT_WORDS, ['running', 'working']] : COUNT_WORDS;
  return words
    .filter(([key]) => (c[key] ?? 0) > 0)
    .map(([key, word]) => `${formatCount(c[key] ?? 0)} ${word}`)
    .join(' · ');
}

/** The `rows` of a GET /api/activity answer (junk dropped, server order kept: newest first). */
export function normalizeActivity(raw: unknown): ActivityRow[] {
  const rows = isRecord(raw) && Array.isArray(raw.rows) ? raw.rows : [];
  return rows.map(normalizeActivityRow).filter((r): r is ActivityRow => r !== null);
}

/** Identity of one run of one job: a re-run of the same chunk keeps the id but is queued anew. */
export function rowKey(row: Pick<ActivityRow, 'id' | 'queuedAt'>): string {
  return `${row.id}@${row.queuedAt}`;
}

// ---------------------------------------------------------------------------
// Background agents (kind job)

export function isJobRow(row: Pick<ActivityRow, 'kind'>): boolean {
  return row.kind === 'job';
}

/** The rows split into the lessons' background agents and everything else (order kept). */
export function splitJobRows<R extends Pick<ActivityRow, 'kind'>>(rows: readonly R[]): { agents: R[]; others: R[] } {
  const agents: R[] = [];
  const others: R[] = [];
  for (const row of rows) (isJobRow(row) ? agents : others).push(row);
  return { agents, others };
}

const JOB_KIND_WORDS: Record<JobRowKind, string> = { research: 'Research', demo: 'Demo', visual: 'Drawing' };

const ROW_KIND_WORDS: Record<Exclude<ActivityRow['kind'], 'job'>, string> = {
  chat: 'Lesson',
  notes: 'Notes',
  practice: 'Practice',
  import: 'Import',
};

/** What a row is about, in a word: "Lesson", "Notes", "Practice", "Import", or a background
 * agent's kind ("Research", …). A practice job is never "Notes" (issue 28 item 7). */
export function rowKindWords(row: Pick<ActivityRow, 'kind' | 'jobKind'>): string {
  return row.kind === 'job' ? jobKindWords(row) : ROW_KIND_WORDS[row.kind];
}

/** Where a row's link goes: its lesson, the Practice page, or the Library (notes, imports). */
export function rowTarget(row: Pick<ActivityRow, 'kind' | 'source' | 'chatId'>): string {
  if (row.kind === 'chat') return `/chat/${encodeURIComponent(row.source)}`;
  if (row.kind === 'job' && row.chatId) return `/chat/${encodeURIComponent(row.chatId)}`;
  if (row.kind === 'practice') return '/practice';
  return '/library';
}

/** "Research", "Demo", "Drawing" (or "Background agent" for a kind this client does not know). */
export function jobKindWords(row: Pick<ActivityRow, 'jobKind'>): string {
  return row.jobKind ? JOB_KIND_WORDS[row.jobKind] : 'Background agent';
}

/** "8 s", "2 min 05 s", "1 h 03 min": how long a job has run (until it ended, or until now). */
export function formatElapsed(row: Pick<ActivityRow, 'queuedAt' | 'startedAt' | 'endedAt'>, now: number): string {
  const start = Date.parse(row.startedAt ?? row.queuedAt);
  if (!Number.isFinite(start)) return '';
  const end = row.endedAt ? Date.parse(row.endedAt) : now;
  const seconds = Math.max(0, Math.floor(((Number.isFinite(end) ? end : now) - start) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

// ---------------------------------------------------------------------------
// Lessons waiting to be read into the graph (the feed's `pending`)

export interface PendingLesson {
  source: string;
  label: string;
  /** idle: after `flushAt` without a turn; turn: when the running reply ends; run: after the running extraction. */
  waitingFor: 'idle' | 'turn' | 'run';
  flushAt: string | null;
}

export function normalizePending(raw: unknown): PendingLesson[] {
  const list = isRecord(raw) && Array.isArray(raw.pending) ? raw.pending : [];
  const out: PendingLesson[] = [];
  for (const p of list) {
    if (!isRecord(p) || typeof p.source !== 'string') continue;
    const waitingFor = p.waitingFor === 'turn' || p.waitingFor === 'run' ? p.waitingFor : 'idle';
    out.push({ source: p.source, label: stringOr(p.label, p.source), waitingFor, flushAt: stringOr(p.flushAt, null) });
  }
  return out;
}

/**
 * When an idle lesson is read into the graph, counted down from `flushAt` (ISO time) at `now`
 * (ms since the epoch): "in 30 s", "in 5 min" (whole minutes rounded up, so it never says fewer
 * minutes than remain), "now"; null when `flushAt` is missing or unparseable. The one wording the
 * dock and the lesson menu share, so the two never disagree at the same moment.
 */
export function readCountdown(flushAt: string | null, now: number): string | null {
  const due = flushAt ? Date.parse(flushAt) : NaN;
  if (!Number.isFinite(due)) return null;
  const seconds = Math.max(0, Math.ceil((due - now) / 1000));
  if (seconds <= 1) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  return `in ${Math.ceil(seconds / 60)} min`;
}

/** "read into your graph in 4 min unless you continue", "… when the reply being written ends", … */
export function pendingWords(p: PendingLesson, now: number): string {
  if (p.waitingFor === 'turn') return 'read into your graph when the reply being written ends';
  if (p.waitingFor === 'run') return 'the rest is read when the running part ends';
  const when = readCountdown(p.flushAt, now);
  if (when === null) return 'read into your graph once the lesson is idle';
  return when === 'now' ? 'read into your graph now' : `read into your graph ${when} unless you continue`;
}

// ---------------------------------------------------------------------------
// Parts: "notes.md · 2/5"

export interface LabelParts {
  title: string;
  /** 1-based part index and total, or null for a one-part source. */
  index: number | null;
  total: number | null;
}

const PART_RE = /^(.*?)\s*·\s*(\d+)\/(\d+)$/;

export function splitLabel(label: string): LabelParts {
  const m = PART_RE.exec(label.trim());
  if (!m) return { title: label.trim(), index: null, total: null };
  return { title: m[1], index: Number(m[2]), total: Number(m[3]) };
}

/** The job's 1-based position in its source's run: from the label, else the id's `_<n>` suffix. */
export function partIndex(row: Pick<ActivityRow, 'id' | 'label'>): number | null {
  const fromLabel = splitLabel(row.label).index;
  if (fromLabel !== null) return fromLabel;
  const m = /_(\d+)$/.exec(row.id);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------------------
// Plain words

const PHASE_WORDS: Record<ActivityPhase, string> = {
  queued: 'queued',
  running: 'working',
  extracting: 'reading',
  waiting: 'waiting to merge',
  auditing: 'checking against the graph',
  merging: 'merging',
  partitioning: 'dividing into problems',
  generating: 'writing the problem',
  grading: 'grading the answer',
  done: 'done',
  error: 'failed',
  aborted: 'aborted',
};

export function phaseWords(phase: ActivityPhase): string {
  return PHASE_WORDS[phase];
}

/** "its share of 2 model calls for 6 notes": a packed note's calls (the pack's, shared). */
export function packWords(pack: ActivityPack): string {
  return `its share of ${plural(pack.requests, 'model call')} for ${plural(pack.notes, 'note')}`;
}

/**
 * Usage of one job in words. Tokens and cost are only counted when a job ends,
 * so a running job says so instead of showing unknowns; an ended job with no
 * model request says that (true) instead of "0 tokens". A note read in a pack
 * shows its share of the pack's tokens and cost and of whose calls it is, never
 * "no model calls" (its share of the calls may round to 0; issue 28 item 7).
 */
export function formatRowUsage(row: Pick<ActivityRow, 'phase' | 'usage' | 'pack'>): string {
  // the model that ran (or runs), when the server names it: "… · on gpt-4o-mini"
  const on = row.usage.model ? ` · on ${row.usage.model}` : '';
  if (isRunningRow(row)) return `usage counted when it ends${on}`;
  const { usage, pack } = row;
  if (pack && pack.requests > 0) return `${formatTokens(usage)} tokens · ${formatCost(usage.costUsd)} · ${packWords(pack)}${on}`;
  if (usage.requests === 0 && usage.inputTokens === null && usage.outputTokens === null) return 'no model calls';
  const requests = `${formatCount(usage.requests)} model call${usage.requests === 1 ? '' : 's'}`;
  return `${formatTokens(usage)} tokens · ${formatCost(usage.costUsd)} · ${requests}${on}`;
}

export interface UsageSum {
  /** Ended jobs summed. */
  jobs: number;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  requests: number;
  /** The largest pack among the summed rows read in a pack (absent: none was). */
  pack?: ActivityPack;
}

/**
 * Usage summed over the ended jobs (running ones have not reported yet). Any
 * unknown part makes the total unknown (null); jobs without a model request
 * add nothing.
 */
export function sumRowUsage(rows: readonly Pick<ActivityRow, 'phase' | 'usage' | 'pack'>[]): UsageSum {
  const ended = rows.filter((r) => !isRunningRow(r));
  const sum: UsageSum = { jobs: ended.length, inputTokens: 0, outputTokens: 0, costUsd: 0, requests: 0 };
  for (const { usage, pack } of ended) {
    sum.requests += usage.requests;
    if (pack && pack.requests > 0 && (!sum.pack || pack.notes > sum.pack.notes)) sum.pack = pack;
    if (usage.requests === 0 && usage.inputTokens === null && usage.outputTokens === null && usage.costUsd === null) continue;
    sum.inputTokens = sum.inputTokens === null || usage.inputTokens === null ? null : sum.inputTokens + usage.inputTokens;
    sum.outputTokens = sum.outputTokens === null || usage.outputTokens === null ? null : sum.outputTokens + usage.outputTokens;
    sum.costUsd = sum.costUsd === null || usage.costUsd === null ? null : sum.costUsd + usage.costUsd;
  }
  return sum;
}

export function formatUsageSum(sum: UsageSum): string {
  if (sum.jobs === 0) return '';
  if (sum.requests === 0 && !sum.pack) return 'no model calls';
  const words = `${formatTokens(sum)} tokens · ${formatCost(sum.costUsd)}`;
  return sum.pack ? `${words} · ${packWords(sum.pack)}` : words;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** Stats summed over jobs. */
export function sumStats(rows: readonly Pick<ActivityRow, 'stats'>[]): ActivityStats {
  const total: ActivityStats = { addedNodes: 0, linkedNodes: 0, addedChains: 0, droppedChains: 0 };
  for (const { stats } of rows) {
    total.addedNodes += stats.addedNodes ?? 0;
    total.linkedNodes += stats.linkedNodes ?? 0;
    total.addedChains += stats.addedChains ?? 0;
    total.droppedChains += stats.droppedChains ?? 0;
  }
  return total;
}

/** "3 new propositions · 1 already in your graph · 2 chains" (zeros left out; "" when all are zero). */
export function formatStats(stats: Partial<ActivityStats>): string {
  const parts: string[] = [];
  if (stats.addedNodes) parts.push(plural(stats.addedNodes, 'new proposition'));
  if (stats.linkedNodes) parts.push(`${formatCount(stats.linkedNodes)} already in your graph`);
  if (stats.addedChains) parts.push(plural(stats.addedChains, 'chain'));
  if (stats.droppedChains) parts.push(`${plural(stats.droppedChains, 'repeated chain')} tidied away`);
  return parts.join(' · ');
}
