import { describe, expect, it } from 'vitest';
import {
  capNote,
  chainCoverage,
  clusterSetTitle,
  defaultSetTitle,
  examProgress,
  FALLBACK_LEVELS,
  keepAnswered,
  levelOf,
  levelsLine,
  normalizeLevels,
  normalizeParams,
  normalizeProblem,
  normalizeSet,
  normalizeSetSummaries,
  scoreWords,
  setRowWords,
  withProblem,
  type PracticeProblem,
  type ProblemSet,
} from './practice';

const chains = [
  { id: 'arg_1', premises: ['a'], conclusion: 'b' },
  { id: 'arg_2', premises: ['b'], conclusion: 'c' },
  { id: 'arg_3', premises: ['a', 'b'], conclusion: 'd' },
];

describe('chainCoverage', () => {
  it('is sound for a true partition', () => {
    expect(chainCoverage(['a', 'b', 'c'], [['a'], ['b', 'c']])).toEqual({ missing: [], duplicated: [] });
  });

  it('names chains in no group, in the chains order', () => {
    expect(chainCoverage(['a', 'b', 'c', 'd'], [['c'], ['a']])).toEqual({ missing: ['b', 'd'], duplicated: [] });
  });

  it('names chains met twice, across groups or within one, each once', () => {
    expect(chainCoverage(['a', 'b', 'c'], [['a', 'b'], ['b', 'c'], ['b'], ['c', 'c']])).toEqual({ missing: [], duplicated: ['b', 'c'] });
  });

  it('accepts chain objects and an empty partition', () => {
    expect(chainCoverage(chains, [])).toEqual({ missing: ['arg_1', 'arg_2', 'arg_3'], duplicated: [] });
    expect(chainCoverage([], [])).toEqual({ missing: [], duplicated: [] });
  });

  it('reports gaps and duplicates together', () => {
    expect(chainCoverage(chains, [['arg_1'], ['arg_1', 'arg_3']])).toEqual({ missing: ['arg_2'], duplicated: ['arg_1'] });
  });
});

describe('level tables', () => {
  const server = {
    rungs: ['R0', 'R1', 'R2', 'R3', 'R4'].map((name, value) => ({ value, name, definition: `${name} def` })),
    cues: ['C0', 'C1', 'C2'].map((name, value) => ({ value, name, definition: `${name} def` })),
    presentations: [
      { value: 'theory', name: 'Th', definition: 'th def' },
      { value: 'application', name: 'Ap', definition: 'ap def' },
    ],
    defaults: { rung: 3, cue: 0, presentation: 'application' },
  };

  it('the fallback mirrors the seed: 5 rungs, 3 cues, 2 presentations, defaults 2 · 1 · theory', () => {
    expect(FALLBACK_LEVELS.rungs.map((l) => l.name)).toEqual(['Worked example', 'Completion', 'Direct exercise', 'Composition', 'Path-finding']);
    expect(FALLBACK_LEVELS.cues.map((l) => l.name)).toEqual(['Lesson context', 'Adjacent context', 'Far context']);
    expect(FALLBACK_LEVELS.presentations.map((l) => l.value)).toEqual(['theory', 'application']);
    expect(FALLBACK_LEVELS.defaults).toEqual({ rung: 2, cue: 1, presentation: 'theory' });
    expect(levelsLine(FALLBACK_LEVELS, FALLBACK_LEVELS.defaults)).toBe('Direct exercise · Adjacent context · Theory');
  });

  it('reads what the server says', () => {
    const levels = normalizeLevels(server);
    expect(levels.rungs[4]).toEqual({ value: 4, name: 'R4', definition: 'R4 def' });
    expect(levels.defaults).toEqual({ rung: 3, cue: 0, presentation: 'application' });
    expect(levelsLine(levels, levels.defaults)).toBe('R3 · C0 · Ap');
  });

  it('replaces an axis it cannot read by the fallback, and junk by the whole fallback', () => {
    const levels = normalizeLevels({ ...server, cues: [{ value: 0.5, name: 'half' }], defaults: { rung: 2.5, cue: 1, presentation: 'theory' } });
    expect(levels.rungs[0].name).toBe('R0');
    expect(levels.cues).toBe(FALLBACK_LEVELS.cues);
    expect(levels.defaults).toEqual({ rung: 2, cue: 1, presentation: 'theory' });
    expect(normalizeLevels(null)).toBe(FALLBACK_LEVELS);
    expect(normalizeLevels({ presentations: [{ value: 'theory', name: 'T' }] }).presentations).toBe(FALLBACK_LEVELS.presentations);
  });

  it('params are exact: integers in range and a known presentation, never a float between levels', () => {
    expect(normalizeParams({ rung: 4, cue: 2, presentation: 'application' })).toEqual({ rung: 4, cue: 2, presentation: 'application' });
    expect(normalizeParams({ rung: 2.5, cue: 1, presentation: 'theory' })).toBeNull();
    expect(normalizeParams({ rung: 5, cue: 1, presentation: 'theory' })).toBeNull();
    expect(normalizeParams({ rung: 1, cue: -1, presentation: 'theory' })).toBeNull();
    expect(normalizeParams({ rung: 1, cue: 1, presentation: 'practice' })).toBeNull();
    expect(normalizeParams('x')).toBeNull();
  });

  it('finds a level by axis and value; an unknown one is absent, never guessed', () => {
    expect(levelOf(FALLBACK_LEVELS, 'rung', 0)?.name).toBe('Worked example');
    expect(levelOf(FALLBACK_LEVELS, 'cue', 2)?.name).toBe('Far context');
    expect(levelOf(FALLBACK_LEVELS, 'presentation', 'application')?.name).toBe('Application');
    expect(levelOf(FALLBACK_LEVELS, 'rung', 7)).toBeNull();
    expect(levelsLine(FALLBACK_LEVELS, { rung: 9, cue: 0, presentation: 'theory' })).toBe('unknown rung · Lesson context · Theory');
    expect(levelsLine(FALLBACK_LEVELS, null)).toBe('Levels unknown');
  });
});

describe('titles', () => {
  it('dates the default title as the server does (UTC day, short month)', () => {
    expect(defaultSetTitle(new Date('2026-12-01T10:00:00Z'))).toBe('Practice — 1 Dec 2026');
    expect(defaultSetTitle(new Date('2027-03-15T23:59:59Z'))).toBe('Practice — 15 Mar 2027');
  });

  it('names a set after its picked clusters', () => {
    expect(clusterSetTitle([])).toBeNull();
    expect(clusterSetTitle(['  '])).toBeNull();
    expect(clusterSetTitle(['Limits'])).toBe('Limits');
    expect(clusterSetTitle(['Limits', 'notes.md'])).toBe('Limits & notes.md');
    expect(clusterSetTitle(['Limits', 'notes.md', 'Series'])).toBe('Limits + 2 more');
    const long = clusterSetTitle(['x'.repeat(300)]);
    expect(long?.length).toBe(200);
    expect(long?.endsWith('…')).toBe(true);
  });
});

function problem(over: Partial<PracticeProblem> = {}): PracticeProblem {
  return {
    id: 'p1',
    index: 1,
    title: 'One',
    chainIds: ['arg_1'],
    status: 'ready',
    error: null,
    statement: 'Show $x$.',
    answer: null,
    answeredAt: null,
    solution: null,
    rubric: null,
    grade: null,
    gradeStatus: 'none',
    gradeError: null,
    ...over,
  };
}

function set(over: Partial<ProblemSet> = {}): ProblemSet {
  return {
    id: 's1',
    title: 'Set',
    note: '',
    status: 'ready',
    error: null,
    createdAt: '2026-12-01T10:00:00Z',
    updatedAt: '2026-12-01T10:00:00Z',
    params: { rung: 2, cue: 1, presentation: 'theory' },
    nodeIds: ['a', 'b'],
    propositions: [],
    chains: [],
    problems: [problem()],
    ...over,
  };
}

describe('reading sets', () => {
  it('reads the list, dropping rows without an id and unknown shapes', () => {
    const list = normalizeSetSummaries({
      sets: [
        { id: 's2', title: 'B', status: 'generating', error: null, createdAt: 'c', updatedAt: 'u', params: { rung: 0, cue: 2, presentation: 'application' }, problems: 3, answered: 0, graded: 0 },
        { title: 'no id' },
        { id: 's1', title: 'A', status: 'weird', problems: -1, params: { rung: 1.5 } },
      ],
    });
    expect(list.map((s) => s.id)).toEqual(['s2', 's1']);
    expect(list[0].params).toEqual({ rung: 0, cue: 2, presentation: 'application' });
    expect(list[1]).toMatchObject({ status: 'error', problems: 0, params: null, error: null });
    expect(normalizeSetSummaries(null)).toEqual([]);
  });

  it('reads a problem; a graded status without a readable grade is an error, not a score', () => {
    expect(normalizeProblem({ id: 'p1', index: 2, status: 'ready', gradeStatus: 'graded', grade: { score: 7, comment: 'Good.' } })).toMatchObject({
      index: 2,
      grade: { score: 7, comment: 'Good.' },
      gradeStatus: 'graded',
      solution: null,
    });
    expect(normalizeProblem({ id: 'p1', gradeStatus: 'graded', grade: { score: 11, comment: '' } })).toMatchObject({ grade: null, gradeStatus: 'error' });
    expect(normalizeProblem({ id: 'p1', gradeStatus: 'graded', grade: { score: 6.5, comment: '' } })?.grade).toBeNull();
    expect(normalizeProblem({ index: 1 })).toBeNull();
  });

  it('reads a whole set, problems in index order', () => {
    const s = normalizeSet({
      id: 's1',
      title: 'T',
      status: 'ready',
      params: { rung: 2, cue: 1, presentation: 'theory' },
      nodeIds: ['a', 1],
      propositions: [{ id: 'a', name: 'A', statement: 'A holds.' }, { name: 'no id' }],
      chains: [{ id: 'arg_1', premises: ['a'], conclusion: 'b' }, { id: 'bad' }],
      problems: [
        { id: 'p2', index: 2, status: 'pending' },
        { id: 'p1', index: 1, status: 'ready', statement: 'S' },
      ],
    });
    expect(s?.nodeIds).toEqual(['a']);
    expect(s?.propositions).toEqual([{ id: 'a', name: 'A', statement: 'A holds.' }]);
    expect(s?.chains.map((c) => c.id)).toEqual(['arg_1']);
    expect(s?.problems.map((p) => p.id)).toEqual(['p1', 'p2']);
    expect(normalizeSet({ title: 'x' })).toBeNull();
  });
});

describe('examProgress', () => {
  it('partitioning', () => {
    const p = examProgress(set({ status: 'partitioning', problems: [] }));
    expect(p.total).toBe(0);
    expect(p.words).toBe('Partitioning the selection into problems…');
  });

  it('generating: how many of N are written (failed ones count as settled)', () => {
    const p = examProgress(
      set({
        status: 'generating',
        problems: [problem({ id: 'p1' }), problem({ id: 'p2', status: 'generating' }), problem({ id: 'p3', status: 'error', error: 'x' })],
      }),
    );
    expect(p).toMatchObject({ total: 3, written: 1, failed: 1 });
    expect(p.words).toBe('Generating… 2 of 3 written');
  });

  it('ready: answered and graded counts', () => {
    const p = examProgress(
      set({
        problems: [
          problem({ id: 'p1', answer: 'a', gradeStatus: 'graded', grade: { score: 7, comment: 'ok' } }),
          problem({ id: 'p2', answer: 'b', gradeStatus: 'grading' }),
          problem({ id: 'p3', answer: 'c', gradeStatus: 'interrupted' }),
          problem({ id: 'p4' }),
          problem({ id: 'p5', status: 'error', error: 'x', statement: null }),
        ],
      }),
    );
    expect(p).toMatchObject({ total: 5, written: 4, failed: 1, answered: 3, graded: 1, grading: 1, interrupted: 1 });
    expect(p.words).toBe('Ready · 3 of 5 answered · 1 graded · 1 grading · 1 problem could not be written');
    expect(examProgress(set()).words).toBe('Ready · 0 of 1 answered');
  });

  it('error: says the error', () => {
    expect(examProgress(set({ status: 'error', error: 'Interrupted (server restarted)' })).words).toBe('Error: Interrupted (server restarted)');
    expect(examProgress(set({ status: 'error', error: null })).words).toBe('Error: the set could not be made.');
  });
});

describe('list rows and scores', () => {
  const row = { status: 'ready' as const, error: null, problems: 4, answered: 2, graded: 1 };
  it('says each status in words', () => {
    expect(setRowWords(row)).toBe('4 problems · 2 answered · 1 graded');
    expect(setRowWords({ ...row, graded: 0, problems: 1, answered: 0 })).toBe('1 problem · 0 answered');
    expect(setRowWords({ ...row, status: 'partitioning' })).toBe('Partitioning…');
    expect(setRowWords({ ...row, status: 'generating' })).toBe('Generating 4 problems…');
    expect(setRowWords({ ...row, status: 'error', error: 'No model' })).toBe('No model');
  });

  it('scores read n/10', () => {
    expect(scoreWords({ score: 7, comment: '' })).toBe('7/10');
  });
});

describe('answers', () => {
  const answered = problem({ answer: 'mine', solution: 'sol', rubric: 'rub', gradeStatus: 'grading' });

  it('withProblem replaces the problem by id', () => {
    const s = withProblem(set(), answered);
    expect(s.problems[0].answer).toBe('mine');
    expect(withProblem(set(), problem({ id: 'nope' })).problems[0].answer).toBeNull();
  });

  it('keepAnswered: a stale read never un-answers a problem', () => {
    const known = withProblem(set(), answered);
    const stale = set();
    expect(keepAnswered(stale, known).problems[0]).toEqual(answered);
    const fresh = set({ problems: [problem({ answer: 'mine', solution: 'sol', rubric: 'rub', gradeStatus: 'graded', grade: { score: 8, comment: 'c' } })] });
    expect(keepAnswered(fresh, known)).toBe(fresh);
    expect(keepAnswered(stale, null)).toBe(stale);
    expect(keepAnswered(stale, { ...known, id: 'other' })).toBe(stale);
  });
});

describe('capNote (the server’s cap_note: trimmed, then the first 2,000 characters)', () => {
  it('only trims a note within the cap', () => {
    expect(capNote('  make me face heap order \n')).toEqual({ kept: 'make me face heap order', length: 23, capped: false });
    expect(capNote('   ')).toEqual({ kept: '', length: 0, capped: false });
  });
  it('keeps the first 2,000 characters of a longer note, never refusing it', () => {
    const long = capNote(' ' + 'a'.repeat(1_999) + ' ' + 'b'.repeat(500));
    expect(long.capped).toBe(true);
    expect(long.length).toBe(2_500);
    expect(long.kept).toBe('a'.repeat(1_999)); // the cut fell after a space: dropped, as the server does
  });
  it('counts characters as Python does, never cutting a surrogate pair', () => {
    const emoji = capNote('😀'.repeat(2_001));
    expect(emoji.length).toBe(2_001);
    expect([...emoji.kept].length).toBe(2_000);
    expect(emoji.kept).toBe('😀'.repeat(2_000));
  });
});
