import { describe, expect, it } from 'vitest';
import {
  countRunning,
  formatElapsed,
  jobKindWords,
  splitJobRows,
  formatRowUsage,
  formatStats,
  formatUsageSum,
  importCountsWords,
  isRunningRow,
  normalizeActivity,
  normalizeActivityRow,
  partIndex,
  phaseWords,
  rowKey,
  rowKindWords,
  rowTarget,
  runningWords,
  splitLabel,
  sumRowUsage,
  sumStats,
  type ActivityRow,
} from './activity';

function row(partial: Partial<ActivityRow> = {}): ActivityRow {
  return {
    id: 'job_src_1_abc_1',
    source: 'src_1',
    kind: 'notes',
    label: 'notes.md · 1/2',
    phase: 'done',
    error: null,
    usage: { inputTokens: 100, outputTokens: 20, requests: 2, costUsd: 0.001 },
    queuedAt: '2026-01-01T00:00:00.000Z',
    startedAt: '2026-01-01T00:00:01.000Z',
    endedAt: '2026-01-01T00:00:05.000Z',
    stats: { addedNodes: 2, linkedNodes: 1, addedChains: 1, droppedChains: 0 },
    ...partial,
  };
}

describe('normalizeActivity', () => {
  it('reads a server answer', () => {
    const rows = normalizeActivity({
      rows: [
        {
          id: 'job_a_1',
          source: 'src_a',
          kind: 'notes',
          label: 'a.md',
          phase: 'extracting',
          error: null,
          usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null },
          startedAt: 't',
          endedAt: null,
          stats: {},
        },
      ],
    });
    expect(rows).toHaveLength(1);
    expect(rows[0].usage).toEqual({ inputTokens: null, outputTokens: null, requests: 0, costUsd: null });
    expect(rows[0].endedAt).toBeNull();
    expect(rows[0].phase).toBe('extracting');
  });

  it('drops junk and keeps unknowns unknown', () => {
    expect(normalizeActivity(null)).toEqual([]);
    expect(normalizeActivity({ rows: [1, { id: 'x' }, { id: 'x', source: 's', phase: 'weird' }] })).toEqual([]);
    const r = normalizeActivityRow({ id: 'x', source: 's', phase: 'done', usage: { inputTokens: 'lots' }, error: '  ' });
    expect(r?.usage.inputTokens).toBeNull();
    expect(r?.usage.requests).toBe(0);
    expect(r?.error).toBeNull();
    expect(r?.label).toBe('s');
    expect(r?.kind).toBe('notes');
  });
});

describe('phases and counts', () => {
  it('counts jobs that have not ended', () => {
    const rows = [row({ phase: 'queued' }), row({ phase: 'auditing' }), row(), row({ phase: 'error' }), row({ phase: 'aborted' })];
    expect(countRunning(rows)).toBe(2);
    expect(countRunning(null)).toBe(0);
    expect(isRunningRow({ phase: 'merging' })).toBe(true);
    expect(phaseWords('extracting')).toBe('reading');
  });

  it('keys a run of a job by id and start', () => {
    expect(rowKey(row())).toBe('job_src_1_abc_1@2026-01-01T00:00:00.000Z');
  });
});

describe('labels', () => {
  it('splits "title · i/N"', () => {
    expect(splitLabel('notes.md · 2/5')).toEqual({ title: 'notes.md', index: 2, total: 5 });
    expect(splitLabel('notes.md')).toEqual({ title: 'notes.md', index: null, total: null });
    expect(splitLabel('a · b.md · 10/12')).toEqual({ title: 'a · b.md', index: 10, total: 12 });
  });

  it('finds the part from the label, else the id', () => {
    expect(partIndex({ id: 'job_s_f_3', label: 'x.md · 2/4' })).toBe(2);
    expect(partIndex({ id: 'job_s_f_3', label: 'x.md' })).toBe(3);
    expect(partIndex({ id: 'weird', label: 'x.md' })).toBeNull();
  });
});

describe('usage', () => {
  it('formats an ended job, with unknowns as "unknown", never 0', () => {
    expect(formatRowUsage(row())).toBe('100 in / 20 out tokens · $0.0010 · 2 model calls');
    expect(formatRowUsage(row({ usage: { inputTokens: 10, outputTokens: 10, requests: 1, costUsd: null } }))).toBe(
      '10 in / 10 out tokens · cost unknown · 1 model call',
    );
    expect(formatRowUsage(row({ usage: { inputTokens: null, outputTokens: null, requests: 3, costUsd: null } }))).toBe(
      'unknown in / unknown out tokens · cost unknown · 3 model calls',
    );
  });

  it('says what is true for running jobs and jobs without requests', () => {
    expect(formatRowUsage(row({ phase: 'extracting', usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null } }))).toBe(
      'usage counted when it ends',
    );
    expect(formatRowUsage(row({ phase: 'error', usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null } }))).toBe(
      'no model calls',
    );
  });

  it('sums ended jobs; one unknown makes the total unknown', () => {
    const a = row();
    const b = row({ usage: { inputTokens: 50, outputTokens: 5, requests: 1, costUsd: null } });
    const running = row({ phase: 'extracting', usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null } });
    const none = row({ phase: 'aborted', usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null } });
    const sum = sumRowUsage([a, b, running, none]);
    expect(sum).toEqual({ jobs: 3, inputTokens: 150, outputTokens: 25, costUsd: null, requests: 3 });
    expect(formatUsageSum(sum)).toBe('150 in / 25 out tokens · cost unknown');
    expect(formatUsageSum(sumRowUsage([running]))).toBe('');
    expect(formatUsageSum(sumRowUsage([none]))).toBe('no model calls');
    expect(sumRowUsage([a, row({ usage: { inputTokens: null, outputTokens: 1, requests: 1, costUsd: 0.5 } })]).inputTokens).toBeNull();
  });
});

describe('stats', () => {
  it('sums and words graph changes', () => {
    const total = sumStats([row(), row({ stats: { addedNodes: 1, droppedChains: 2 } }), row({ stats: {} })]);
    expect(total).toEqual({ addedNodes: 3, linkedNodes: 1, addedChains: 1, droppedChains: 2 });
    expect(formatStats(total)).toBe('3 new propositions · 1 already in your graph · 1 chain · 2 repeated chains tidied away');
    expect(formatStats({ addedNodes: 1 })).toBe('1 new proposition');
    expect(formatStats({})).toBe('');
  });
});

describe('queued and started', () => {
  it('a queued job has no start yet and keeps its identity when it starts', () => {
    const raw = { id: 'j', source: 's', phase: 'queued', queuedAt: '2026-01-01T00:00:00Z', startedAt: null };
    const [queued] = normalizeActivity({ rows: [raw] });
    expect(queued.startedAt).toBeNull();
    expect(queued.queuedAt).toBe('2026-01-01T00:00:00Z');
    const [started] = normalizeActivity({ rows: [{ ...raw, phase: 'extracting', startedAt: '2026-01-01T00:00:09Z' }] });
    expect(rowKey(started)).toBe(rowKey(queued));
    // an older server without queuedAt: its startedAt stands in
    expect(normalizeActivity({ rows: [{ id: 'j', source: 's', phase: 'done', startedAt: 't0' }] })[0].queuedAt).toBe('t0');
  });
});

describe('practice rows', () => {
  it('are read with their own phases and kind, in plain words', () => {
    const row = normalizeActivityRow({ id: 'ps_1:gen:p1', source: 'ps_1:gen:p1', kind: 'practice', phase: 'generating', label: 'Problem 1/2 — Heaps' });
    expect(row?.kind).toBe('practice');
    expect(row && phaseWords(row.phase)).toBe('writing the problem');
    expect(normalizeActivityRow({ id: 'x', source: 'x', kind: 'practice', phase: 'grading' })?.phase).toBe('grading');
  });
});

describe('background agent rows (kind job)', () => {
  const raw = {
    id: 'job_abc',
    source: 'job_abc',
    kind: 'job',
    jobKind: 'research',
    chatId: 'chat_1',
    label: 'Researching: who proved it?',
    phase: 'running',
    error: null,
    usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null },
    queuedAt: '2026-01-01T00:00:00.000Z',
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: null,
    stats: {},
  };

  it('are read with their worker kind and lesson, running in plain words', () => {
    const row = normalizeActivityRow(raw);
    expect(row?.kind).toBe('job');
    expect(row?.jobKind).toBe('research');
    expect(row?.chatId).toBe('chat_1');
    expect(row && phaseWords(row.phase)).toBe('working');
    expect(row && isRunningRow(row)).toBe(true);
    expect(row && formatRowUsage(row)).toBe('usage counted when it ends');
    expect(row && jobKindWords(row)).toBe('Research');
    expect(jobKindWords(normalizeActivityRow({ ...raw, jobKind: 'poem' })!)).toBe('Background agent');
    // other kinds never carry job fields
    expect(normalizeActivityRow({ ...raw, kind: 'chat' })?.jobKind).toBeUndefined();
  });

  it('are grouped apart from the other rows, order kept', () => {
    const rows = normalizeActivity({ rows: [raw, { ...raw, id: 'n', source: 'n', kind: 'notes' }, { ...raw, id: 'job_2', source: 'job_2' }] });
    const { agents, others } = splitJobRows(rows);
    expect(agents.map((r) => r.id)).toEqual(['job_abc', 'job_2']);
    expect(others.map((r) => r.id)).toEqual(['n']);
    expect(countRunning(rows)).toBe(3);
  });

  it('say how long they have run', () => {
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    const row = normalizeActivityRow(raw)!;
    expect(formatElapsed(row, t0 + 8_400)).toBe('8 s');
    expect(formatElapsed(row, t0 + 125_000)).toBe('2 min 05 s');
    expect(formatElapsed(row, t0 + 3_780_000)).toBe('1 h 03 min');
    expect(formatElapsed({ ...row, endedAt: '2026-01-01T00:00:30.000Z' }, t0 + 999_000)).toBe('30 s');
    expect(formatElapsed({ ...row, startedAt: null, queuedAt: '' }, t0)).toBe('');
  });
});

describe('the feed words of issue 28 item 7', () => {
  const packed = {
    id: 'job_src_2_abc_1',
    source: 'src_2',
    kind: 'notes',
    label: 'groups.md',
    phase: 'done',
    error: null,
    usage: { inputTokens: 1200, outputTokens: 300, requests: 0, costUsd: 0.0021 },
    queuedAt: 't0',
    startedAt: 't1',
    endedAt: 't2',
    stats: { addedNodes: 3 },
    pack: { notes: 40, requests: 2 },
  };

  it('a packed note shows its share of the pack, never "no model calls" beside its propositions', () => {
    const row = normalizeActivityRow(packed)!;
    expect(row.pack).toEqual({ notes: 40, requests: 2 });
    expect(formatRowUsage(row)).toBe('1,200 in / 300 out tokens · $0.0021 · its share of 2 model calls for 40 notes');
    expect(formatStats(row.stats)).toBe('3 new propositions');
    // a file of one packed row, as the Library's import list sums it
    const sum = sumRowUsage([row]);
    expect(sum.pack).toEqual({ notes: 40, requests: 2 });
    expect(formatUsageSum(sum)).toBe('1,200 in / 300 out tokens · $0.0021 · its share of 2 model calls for 40 notes');
    expect(formatUsageSum(sum)).not.toContain('no model calls');
  });

  it('a row read alone, or a junk pack, says its own calls', () => {
    expect(normalizeActivityRow({ ...packed, pack: null })!.pack).toBeUndefined();
    expect(normalizeActivityRow({ ...packed, pack: { notes: 'x', requests: 1 } })!.pack).toBeUndefined();
    const alone = normalizeActivityRow({ ...packed, pack: undefined, usage: { ...packed.usage, requests: 2 } })!;
    expect(formatRowUsage(alone)).toBe('1,200 in / 300 out tokens · $0.0021 · 2 model calls');
    expect(sumRowUsage([alone]).pack).toBeUndefined();
    // a pack whose call failed before any answer: its tokens are unknown, its failed calls counted
    const failed = normalizeActivityRow({
      ...packed,
      phase: 'error',
      usage: { inputTokens: null, outputTokens: null, requests: 1, costUsd: null },
      pack: null,
    })!;
    expect(formatRowUsage(failed)).toBe('unknown in / unknown out tokens · cost unknown · 1 model call');
  });

  it('practice jobs are practice, never notes; each kind links where it lives', () => {
    const practice = normalizeActivityRow({ id: 'ps_1:gen:p1', source: 'ps_1:gen:p1', kind: 'practice', phase: 'generating', label: 'Problem 1/2' })!;
    expect(rowKindWords(practice)).toBe('Practice');
    expect(rowTarget(practice)).toBe('/practice');
    expect(rowKindWords(row())).toBe('Notes');
    expect(rowTarget(row())).toBe('/library');
    expect(rowKindWords(row({ kind: 'chat', source: 'c 1' }))).toBe('Lesson');
    expect(rowTarget(row({ kind: 'chat', source: 'c 1' }))).toBe('/chat/c%201');
    expect(rowKindWords(row({ kind: 'import' }))).toBe('Import');
    expect(rowKindWords(row({ kind: 'job', jobKind: 'research' }))).toBe('Research');
  });

  it('an import says reading only for files a model call reads; launched files that wait are waiting', () => {
    const counts = { waiting: 7, running: 3, reading: 2, merging: 1, done: 4, failed: 0 };
    expect(importCountsWords(counts)).toBe('4 done · 2 reading · 1 merging · 7 waiting');
    expect(importCountsWords({ waiting: 2, running: 0, reading: 0, merging: 0 })).toBe('2 waiting');
    expect(importCountsWords(undefined)).toBe('');
  });

  it('the dock says how many jobs work and how many only wait', () => {
    const rows = [
      row({ phase: 'extracting' }),
      row({ phase: 'queued' }),
      row({ phase: 'waiting' }),
      row({ phase: 'queued' }),
      row({ phase: 'done' }),
      row({ kind: 'import', phase: 'running' }),
    ];
    expect(runningWords(rows)).toBe('1 job working · 3 waiting');
    expect(runningWords([row({ phase: 'queued' }), row({ phase: 'queued' })])).toBe('2 jobs waiting');
    expect(runningWords([row({ phase: 'merging' }), row({ kind: 'practice', phase: 'generating' })])).toBe('2 jobs working');
    expect(runningWords([row({ phase: 'done' })])).toBe('Nothing running');
    expect(runningWords(null)).toBe('Nothing running');
  });

  it('reading is the word for a running model call, waiting to merge for a row after it', () => {
    expect(phaseWords('extracting')).toBe('reading');
    expect(phaseWords('waiting')).toBe('waiting to merge');
    expect(phaseWords('queued')).toBe('queued');
  });
});
