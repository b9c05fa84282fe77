import type { ChainMembers } from '../library/chainSelection';

// ---------------------------------------------------------------------------
// Partitions: every chain of a set in exactly one problem

/**
 * How a partition (a list of groups of chain ids) covers the chains: `missing` are chains in no
 * group (in the chains' order), `duplicated` are chains in more than one group or twice in one (in
 * the order their second appearance is met, each once). Only `missing` makes a partition unsound;
 * `duplicated` is informational.
 */
export function chainCoverage(
  chains: readonly (string | { id: string })[],
  partition: readonly (readonly string[])[],
): { missing: string[]; duplicated: string[] } {
  const seen = new Set<string>();
  const duplicated: string[] = [];
  for (const group of partition) {
    for (const id of group) {
      if (seen.has(id)) {
        if (!duplicated.includes(id)) duplicated.push(id);
      } else seen.add(id);
    }
  }
  const missing: string[] = [];
  for (const c of chains) {
    const id = typeof c === 'string' ? c : c.id;
    if (!seen.has(id) && !missing.includes(id)) missing.push(id);
  }
  return { missing, duplicated };
}

// ---------------------------------------------------------------------------
// The three named levels (GET /api/practice/levels). Components render the server's tables;
// FALLBACK_LEVELS mirrors server/core/practice/levels.py for when that read fails (and for tests);
// practiceVectors.test.ts holds it equal to tests/vectors/levels.json, generated from the server.

export type Presentation = 'theory' | 'application';

export interface PracticeParams {
  rung: number;
  cue: number;
  presentation: Presentation;
}

export interface Level<V extends number | string = number | string> {
  value: V;
  name: string;
  definition: string;
}

export interface PracticeLevels {
  rungs: Level<number>[];
  cues: Level<number>[];
  presentations: Level<Presentation>[];
  defaults: PracticeParams;
}

export type LevelAxis = 'rung' | 'cue' | 'presentation';

export const FALLBACK_LEVELS: PracticeLevels = {
  rungs: [
    { value: 0, name: 'Worked example', definition: 'A fully solved problem to study, with its reasoning laid out step by step.' },
    { value: 1, name: 'Completion', definition: 'A solution with a decisive step left out, for you to supply and justify.' },
    { value: 2, name: 'Direct exercise', definition: 'A problem the ideas solve directly, once you see which ones apply.' },
    { value: 3, name: 'Composition', definition: 'A problem that needs several ideas combined in the right order.' },
    { value: 4, name: 'Path-finding', definition: 'An open problem where finding the route through the ideas is the work.' },
  ],
  cues: [
    { value: 0, name: 'Lesson context', definition: "The textbook shape, in the teaching's own framing and examples." },
    { value: 1, name: 'Adjacent context', definition: "A genuinely new situation built from the teaching's own world." },
    { value: 2, name: 'Far context', definition: 'The edge of the recognisable: the idea still applies, found only by looking.' },
  ],
  presentations: [
    { value: 'theory', name: 'Theory', definition: "Posed in the subject's own terms." },
    { value: 'application', name: 'Application', definition: 'A concrete worldly affair in which the structure appears in the wild.' },
  ],
  defaults: { rung: 2, cue: 1, presentation: 'theory' },
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}

function isPresentation(value: unknown): value is Presentation {
  return value === 'theory' || value === 'application';
}

/** One axis's table: levels valued 0..n-1 in order (numeric axes), each named. Null when it is not. */
function numericAxis(raw: unknown): Level<number>[] | null {
  if (!Array.isArray(raw) || raw.length === 0) return null;
  const out: Level<number>[] = [];
  for (const [i, item] of raw.entries()) {
    if (!isRecord(item) || item.value !== i || typeof item.name !== 'string' || !item.name.trim()) return null;
    out.push({ value: i, name: item.name, definition: str(item.definition) ?? '' });
  }
  return out;
}

function presentationAxis(raw: unknown): Level<Presentation>[] | null {
  if (!Array.isArray(raw)) return null;
  const out: Level<Presentation>[] = [];
  for (const item of raw) {
    if (!isRecord(item) || !isPresentation(item.value) || typeof item.name !== 'string' || !item.name.trim()) return null;
    if (out.some((p) => p.value === item.value)) return null;
    out.push({ value: item.value, name: item.name, definition: str(item.definition) ?? '' });
  }
  return out.length === 2 ? out : null;
}

/** Params exactly as the API's unions allow them (integers in range, a known presentation); else null. */
export function normalizeParams(raw: unknown, levels: PracticeLevels = FALLBACK_LEVELS): PracticeParams | null {
  if (!isRecord(raw)) return null;
  const { rung, cue, presentation } = raw;
  const inRange = (v: unknown, n: number) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < n;
  if (!inRange(rung, levels.rungs.length) || !inRange(cue, levels.cues.length) || !isPresentation(presentation)) return null;
  return { rung: rung as number, cue: cue as number, presentation };
}

/** The server's level tables, an axis it did not answer sanely replaced by the fallback's. */
export function normalizeLevels(raw: unknown): PracticeLevels {
  if (!isRecord(raw)) return FALLBACK_LEVELS;
  const levels: PracticeLevels = {
    rungs: numericAxis(raw.rungs) ?? FALLBACK_LEVELS.rungs,
    cues: numericAxis(raw.cues) ?? FALLBACK_LEVELS.cues,
    presentations: presentationAxis(raw.presentations) ?? FALLBACK_LEVELS.presentations,
    defaults: FALLBACK_LEVELS.defaults,
  };
  const defaults = normalizeParams(raw.defaults, levels);
  if (defaults) levels.defaults = defaults;
  else levels.defaults = normalizeParams(FALLBACK_LEVELS.defaults, levels) ?? { rung: 0, cue: 0, presentation: 'theory' };
  return levels;
}

/** The level an axis takes at a value; null when the tables have no such level. */
export function levelOf(levels: PracticeLevels, axis: LevelAxis, value: number | string): Level | null {
  const table: readonly Level[] = axis === 'rung' ? levels.rungs : axis === 'cue' ? levels.cues : levels.presentations;
  return table.find((l) => l.value === value) ?? null;
}

/** "Direct exercise · Adjacent context · Theory" (an unknown level reads as absent, never guessed). */
export function levelsLine(levels: PracticeLevels, params: PracticeParams | null): string {
  if (!params) return 'Levels unknown';
  const rung = levelOf(levels, 'rung', params.rung)?.name ?? 'unknown rung';
  const cue = levelOf(levels, 'cue', params.cue)?.name ?? 'unknown cue distance';
  const presentation = levelOf(levels, 'presentation', params.presentation)?.name ?? 'unknown presentation';
  return `${rung} · ${cue} · ${presentation}`;
}

// ---------------------------------------------------------------------------
// Titles

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The title the server stamps on a set created without one: "Practice — 1 Dec 2026" (UTC date, as the server dates it). */
export function defaultSetTitle(now: Date = new Date()): string {
  return `Practice — ${now.getUTCDate()} ${MONTHS[now.getUTCMonth()]} ${now.getUTCFullYear()}`;
}

export const MAX_TITLE = 200;

/** A set made from picked clusters is named after them: one label, or the first and how many more. */
export function clusterSetTitle(labels: readonly string[]): string | null {
  const named = labels.map((l) => l.trim()).filter(Boolean);
  if (!named.length) return null;
  const title = named.length === 1 ? named[0] : named.length === 2 ? `${named[0]} & ${named[1]}` : `${named[0]} + ${named.length - 1} more`;
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title;
}

// ---------------------------------------------------------------------------
// Sets and problems (GET /api/practice/sets, GET /api/practice/sets/{id}), read defensively

export const SET_STATUSES = ['partitioning', 'generating', 'ready', 'error'] as const;
export type SetStatus = (typeof SET_STATUSES)[number];
export const PROBLEM_STATUSES = ['pending', 'generating', 'ready', 'error'] as const;
export type ProblemStatus = (typeof PROBLEM_STATUSES)[number];
export const GRADE_STATUSES = ['none', 'grading', 'graded', 'interrupted', 'error'] as const;
export type GradeStatus = (typeof GRADE_STATUSES)[number];

/** Characters of the learner's note (trimmed) and of one answer, as the server caps them. */
export const MAX_NOTE = 2_000;
export const MAX_ANSWER = 20_000;

/**
 * The learner's note as the server keeps it (server/core/contracts/practice.py `cap_note`, seed §7:
 * "trimmed, capped at 2000 characters"): trimmed, then its first `MAX_NOTE` characters (code
 * points, as Python counts them, never half a surrogate pair), then trimmed at the end again.
 * `length` counts the trimmed note's characters; `capped` says whether anything is cut.
 */
export function capNote(note: string): { kept: string; length: number; capped: boolean } {
  const chars = [...note.trim()];
  const capped = chars.length > MAX_NOTE;
  return { kept: capped ? chars.slice(0, MAX_NOTE).join('').trimEnd() : chars.join(''), length: chars.length, capped };
}

export interface SetSummary {
  id: string;
  title: string;
  status: SetStatus;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  params: PracticeParams | null;
  problems: number;
  answered: number;
  graded: number;
}

export interface Grade {
  score: number;
  comment: string;
}

export interface PracticeProblem {
  id: string;
  index: number;
  title: string;
  chainIds: string[];
  status: ProblemStatus;
  error: string | null;
  statement: string | null;
  answer: string | null;
  answeredAt: string | null;
  solution: string | null;
  rubric: string | null;
  grade: Grade | null;
  gradeStatus: GradeStatus;
  gradeError: string | null;
}

export interface PracticeProposition {
  id: string;
  name: string;
  statement: string;
}

export interface ProblemSet {
  id: string;
  title: string;
  note: string;
  status: SetStatus;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  params: PracticeParams | null;
  nodeIds: string[];
  propositions: PracticeProposition[];
  chains: ChainMembers[];
  problems: PracticeProblem[];
}

function oneOf<T extends string>(values: readonly T[], value: unknown, fallback: T): T {
  return typeof value === 'string' && (values as readonly string[]).includes(value) ? (value as T) : fallback;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];
}

function normalizeSummary(raw: unknown): SetSummary | null {
  if (!isRecord(raw) || typeof raw.id !== 'string' || !raw.id) return null;
  return {
    id: raw.id,
    title: str(raw.title) ?? '',
    status: oneOf(SET_STATUSES, raw.status, 'error'),
    error: str(raw.error),
    createdAt: str(raw.createdAt) ?? '',
    updatedAt: str(raw.updatedAt) ?? '',
    params: normalizeParams(raw.params),
    problems: count(raw.problems),
    answered: count(raw.answered),
    graded: count(raw.graded),
  };
}

/** `{"sets": [...]}`: the list as the server orders it (newest first), junk rows dropped. */
export function normalizeSetSummaries(raw: unknown): SetSummary[] {
  const list = isRecord(raw) && Array.isArray(raw.sets) ? raw.sets : [];
  return list.map(normalizeSummary).filter((s): s is SetSummary => s !== null);
}

function normalizeGrade(raw: unknown): Grade | null {
  if (!isRecord(raw) || typeof raw.score !== 'number' || !Number.isInteger(raw.score) || raw.score < 0 || raw.score > 10) return null;
  return { score: raw.score, comment: str(raw.comment) ?? '' };
}

/** One problem; null when it has no id. */
export function normalizeProblem(raw: unknown): PracticeProblem | null {
  if (!isRecord(raw) || typeof raw.id !== 'string' || !raw.id) return null;
  const grade = normalizeGrade(raw.grade);
  let gradeStatus = oneOf(GRADE_STATUSES, raw.gradeStatus, 'none');
  if (gradeStatus === 'graded' && !grade) gradeStatus = 'error';
  return {
    id: raw.id,
    index: typeof raw.index === 'number' && Number.isInteger(raw.index) ? raw.index : 0,
    title: str(raw.title) ?? '',
    chainIds: strings(raw.chainIds),
    status: oneOf(PROBLEM_STATUSES, raw.status, 'error'),
    error: str(raw.error),
    statement: str(raw.statement),
    answer: str(raw.answer),
    answeredAt: str(raw.answeredAt),
    solution: str(raw.solution),
    rubric: str(raw.rubric),
    grade,
    gradeStatus,
    gradeError: str(raw.gradeError),
  };
}

/** A whole set; null when it is not one (no id). Problems keep their index order. */
export function normalizeSet(raw: unknown): ProblemSet | null {
  if (!isRecord(raw) || typeof raw.id !== 'string' || !raw.id) return null;
  const propositions: PracticeProposition[] = [];
  for (const p of Array.isArray(raw.propositions) ? raw.propositions : []) {
    if (isRecord(p) && typeof p.id === 'string') propositions.push({ id: p.id, name: str(p.name) ?? p.id, statement: str(p.statement) ?? '' });
  }
  const chains: ChainMembers[] = [];
  for (const c of Array.isArray(raw.chains) ? raw.chains : []) {
    if (isRecord(c) && typeof c.id === 'string' && typeof c.conclusion === 'string') chains.push({ id: c.id, premises: strings(c.premises), conclusion: c.conclusion });
  }
  const problems = (Array.isArray(raw.problems) ? raw.problems : [])
    .map(normalizeProblem)
    .filter((p): p is PracticeProblem => p !== null)
    .sort((a, b) => a.index - b.index);
  return {
    id: raw.id,
    title: str(raw.title) ?? '',
    note: str(raw.note) ?? '',
    status: oneOf(SET_STATUSES, raw.status, 'error'),
    error: str(raw.error),
    createdAt: str(raw.createdAt) ?? '',
    updatedAt: str(raw.updatedAt) ?? '',
    params: normalizeParams(raw.params),
    nodeIds: strings(raw.nodeIds),
    propositions,
    chains,
    problems,
  };
}

// ---------------------------------------------------------------------------
// The exam page's arithmetic

export interface ExamProgress {
  total: number;
  /** Problems written (ready). */
  written: number;
  /** Problems that failed to be written. */
  failed: number;
  answered: number;
  graded: number;
  grading: number;
  /** Answers whose grade was dropped (interrupted or failed). */
  interrupted: number;
  /** The status line: "Partitioning…", "Generating… 2 of 5 written", "Ready · 1 of 5 answered · 1 graded", "Error: …". */
  words: string;
}

/** Counts and the status line of a set. */
export function examProgress(set: Pick<ProblemSet, 'status' | 'error' | 'problems'>): ExamProgress {
  const ps = set.problems;
  const total = ps.length;
  const written = ps.filter((p) => p.status === 'ready').length;
  const failed = ps.filter((p) => p.status === 'error').length;
  const answered = ps.filter((p) => p.answer !== null).length;
  const graded = ps.filter((p) => p.gradeStatus === 'graded').length;
  const grading = ps.filter((p) => p.answer !== null && p.gradeStatus === 'grading').length;
  const interrupted = ps.filter((p) => p.answer !== null && (p.gradeStatus === 'interrupted' || p.gradeStatus === 'error')).length;
  let words: string;
  switch (set.status) {
    case 'partitioning':
      words = 'Partitioning the selection into problems…';
      break;
    case 'generating': {
      const settled = written + failed;
      words = total ? `Generating… ${settled} of ${total} written` : 'Generating…';
      break;
    }
    case 'ready': {
      const parts = [`Ready · ${answered} of ${total} answered`];
      if (graded) parts.push(`${graded} graded`);
      if (grading) parts.push(`${grading} grading`);
      if (failed) parts.push(`${failed} ${failed === 1 ? 'problem' : 'problems'} could not be written`);
      words = parts.join(' · ');
      break;
    }
    default:
      words = `Error: ${set.error?.trim() || 'the set could not be made.'}`;
  }
  return { total, written, failed, answered, graded, grading, interrupted, words };
}

/** The list row's status words for a set summary. */
export function setRowWords(s: Pick<SetSummary, 'status' | 'error' | 'problems' | 'answered' | 'graded'>): string {
  switch (s.status) {
    case 'partitioning':
      return 'Partitioning…';
    case 'generating':
      return s.problems ? `Generating ${s.problems} problems…` : 'Generating…';
    case 'ready': {
      const parts = [`${s.problems} ${s.problems === 1 ? 'problem' : 'problems'}`, `${s.answered} answered`];
      if (s.graded) parts.push(`${s.graded} graded`);
      return parts.join(' · ');
    }
    default:
      return s.error?.trim() || 'Could not be made';
  }
}

/** "7/10". */
export function scoreWords(grade: Grade): string {
  return `${grade.score}/10`;
}

/** The set with one problem replaced by the server's newer copy of it (the answer's reply). */
export function withProblem(set: ProblemSet, problem: PracticeProblem): ProblemSet {
  if (!set.problems.some((p) => p.id === problem.id)) return set;
  return { ...set, problems: set.problems.map((p) => (p.id === problem.id ? problem : p)) };
}

/**
 * A freshly read set, never behind what this page already knows: a problem answered here (the
 * answer's reply) stays answered, solution and rubric revealed, should a read begun before the
 * answer land after it. One attempt: an answer never un-happens.
 */
export function keepAnswered(fetched: ProblemSet, known: ProblemSet | null): ProblemSet {
  if (!known || known.id !== fetched.id) return fetched;
  const answered = new Map(known.problems.filter((p) => p.answer !== null).map((p) => [p.id, p]));
  if (!answered.size) return fetched;
  let changed = false;
  const problems = fetched.problems.map((p) => {
    const mine = answered.get(p.id);
    if (!mine || p.answer !== null) return p;
    changed = true;
    return mine;
  });
  return changed ? { ...fetched, problems } : fetched;
}
