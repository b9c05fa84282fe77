// A lesson's place in the knowledge graph (GET /api/chats/{id}/coverage, POST /api/chats/{id}/graph):
// how much of its teacher prose the graph has read, what runs, and when the rest is read.
// Pure helpers: reading answers defensively, the ring's fraction, plain words.

import { isActivityPhase, normalizePending, pendingWords, phaseWords, readCountdown, type ActivityPhase, type PendingLesson } from '../machine_room/activity';
import { formatCount } from '../usage';

export interface CoverageJob {
  id: string;
  label: string;
  phase: ActivityPhase;
}

export interface LessonCoverage {
  coveredTokens: number;
  uncoveredTokens: number;
  coveredMessages: number;
  uncoveredMessages: number;
  totalTokens: number;
  budgetTokens: number;
  /** The lesson's extraction is running. */
  running: boolean;
  jobs: CoverageJob[];
  pending: PendingLesson | null;
}

export type FlushStatus = 'started' | 'running' | 'deferred' | 'covered' | 'empty' | 'missing';

export interface FlushAnswer {
  status: FlushStatus;
  detail: string;
  coverage: LessonCoverage | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function normalizeCoverage(raw: unknown): LessonCoverage | null {
  if (!isRecord(raw)) return null;
  const jobs: CoverageJob[] = [];
  if (Array.isArray(raw.jobs)) {
    for (const j of raw.jobs) {
      if (isRecord(j) && typeof j.id === 'string' && isActivityPhase(j.phase)) {
        jobs.push({ id: j.id, label: typeof j.label === 'string' ? j.label : j.id, phase: j.phase });
      }
    }
  }
  const coveredTokens = count(raw.coveredTokens);
  const uncoveredTokens = count(raw.uncoveredTokens);
  return {
    coveredTokens,
    uncoveredTokens,
    coveredMessages: count(raw.coveredMessages),
    uncoveredMessages: count(raw.uncoveredMessages),
    totalTokens: coveredTokens + uncoveredTokens,
    budgetTokens: count(raw.budgetTokens),
    running: raw.running === true,
    jobs,
    pending: normalizePending({ pending: isRecord(raw.pending) ? [raw.pending] : [] })[0] ?? null,
  };
}

const STATUSES: readonly FlushStatus[] = ['started', 'running', 'deferred', 'covered', 'empty', 'missing'];

export function normalizeFlush(raw: unknown): FlushAnswer {
  const r = isRecord(raw) ? raw : {};
  const status = STATUSES.includes(r.status as FlushStatus) ? (r.status as FlushStatus) : 'missing';
  return { status, detail: typeof r.detail === 'string' ? r.detail : '', coverage: normalizeCoverage(r.coverage) };
}

/** The share of the lesson's teacher prose the graph has read, 0..1 (0 when nothing was taught). */
export function coveredFraction(c: Pick<LessonCoverage, 'coveredTokens' | 'totalTokens'>): number {
  return c.totalTokens > 0 ? Math.min(1, c.coveredTokens / c.totalTokens) : 0;
}

/** Whether the lesson's reading is under way or queued behind a turn or a run (worth polling). */
export function isBusy(c: LessonCoverage | null): boolean {
  return !!c && (c.running || c.jobs.length > 0 || (c.pending !== null && c.pending.waitingFor !== 'idle'));
}

/** Whether "Add to my graph now" has anything to do. */
export function canFlush(c: LessonCoverage | null): boolean {
  return !!c && c.uncoveredTokens > 0 && !c.running;
}

/** The ring's short label: "62%", "all", "—" (nothing taught yet). */
export function ringLabel(c: LessonCoverage): string {
  if (c.totalTokens === 0) return '—';
  if (c.uncoveredTokens === 0) return 'all';
  return `${Math.floor(coveredFraction(c) * 100)}%`;
}

/** One or two plain sentences: what is in the graph, what is not yet, and what happens next. */
export function coverageWords(c: LessonCoverage, now: number): string {
  if (c.totalTokens === 0) return 'Nothing taught yet: the teacher’s explanations are read into your graph once the lesson begins.';
  const job = c.jobs.find((j) => j.phase !== 'queued') ?? c.jobs[0];
  if (c.running || job) {
    const what = job ? `${job.label}: ${phaseWords(job.phase)}` : 'running';
    return `Being read into your graph (${what}).`;
  }
  if (c.uncoveredTokens === 0) return `All of this lesson’s teaching is in your graph (${plural(c.coveredMessages, 'message')}).`;
  const one = c.uncoveredMessages === 1;
  const rest = `${plural(c.uncoveredMessages, 'message')} (about ${formatCount(c.uncoveredTokens)} tokens)`;
  const first = c.coveredTokens > 0
    ? `${Math.floor(coveredFraction(c) * 100)}% is in your graph; ${rest} ${one ? 'is' : 'are'} not in it yet`
    : `${rest} ${one ? 'is' : 'are'} not in your graph yet`;
  return `${capitalize(first)}. ${one ? 'It is' : 'They are'} ${nextWords(c, now)}.`;
}

/** The pending lesson's countdown in the dock's own words (`pendingWords`), and the other ways in. */
function nextWords(c: LessonCoverage, now: number): string {
  const p = c.pending;
  const otherwise = 'when you leave the lesson, or now from the menu';
  if (p?.waitingFor === 'turn') return pendingWords(p, now);
  if (p?.waitingFor === 'run') return `read into your graph when the running part ends, ${otherwise}`;
  const when = p ? readCountdown(p.flushAt, now) : null;
  if (when === null) return `read into your graph after a few idle minutes, ${otherwise}`;
  if (when === 'now') return 'read into your graph now';
  return `read into your graph ${when} unless you continue, ${otherwise}`;
}

function plural(n: number, one: string): string {
  return `${formatCount(n)} ${n === 1 ? one : `${one}s`}`;
}

function capitalize(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

/** What the menu says after "Add to my graph now". */
export function flushNotice(a: FlushAnswer): string {
  if (a.detail) return capitalize(a.detail) + '.';
  return a.status === 'started' ? 'This lesson is being read into your graph.' : '';
}
