import { describe, expect, it } from 'vitest';
import { importCountsWords, normalizeActivityRow, phaseWords, type ActivityRow } from '../machine_room/activity';
import {
  earlierImportBadge,
  batchBySize,
  entryPath,
  fileProgress,
  foldedState,
  formatBytes,
  hasNoteSuffix,
  isHiddenPath,
  LOST_AFTER_POLLS,
  makeBaseline,
  normalizeSources,
  mergePicks,
  normalizeImportFiles,
  askWords,
  folderRoots,
  goneWords,
  importedOn,
  normalizeGone,
  plainDetail,
  progressWords,
  runRows,
  splitBySize,
  splitFolderFiles,
  formatSizeOver,
  uploadName,
} from './imports';

function row(partial: Partial<ActivityRow> = {}): ActivityRow {
  return {
    id: 'job_src_a_f1_1',
    source: 'src_a',
    kind: 'notes',
    label: 'a.md · 1/2',
    phase: 'queued',
    error: null,
    usage: { inputTokens: null, outputTokens: null, requests: 0, costUsd: null },
    queuedAt: '2026-01-01T00:00:00.000Z',
    startedAt: null,
    endedAt: null,
    stats: {},
    ...partial,
  };
}

const done = (partial: Partial<ActivityRow> = {}) =>
  row({ phase: 'done', usage: { inputTokens: 10, outputTokens: 10, requests: 1, costUsd: null }, stats: { addedNodes: 2 }, ...partial });

describe('import answers', () => {
  it('reads the files list of a 202 or 400 answer', () => {
    const files = normalizeImportFiles({
      files: [
        { name: 'a.md', sourceId: 'src_a', status: 'queued', detail: '', chunks: 2, replaces: 'replaces what the earlier a.md said' },
        { name: 'empty.md', sourceId: null, status: 'refused', detail: 'empty.md: the file is empty', chunks: 0 },
        { name: 'odd.md', status: 'mystery' },
        'junk',
      ],
    });
    expect(files.map((f) => [f.name, f.status, f.sourceId])).toEqual([
      ['a.md', 'queued', 'src_a'],
      ['empty.md', 'refused', null],
      ['odd.md', 'refused', null],
    ]);
    expect(files.map((f) => f.replaces)).toEqual(['replaces what the earlier a.md said', '', '']);
    expect(normalizeImportFiles({ error: 'refused' })).toEqual([]);
  });

  it('drops the file name the server puts in front of a refusal', () => {
    expect(plainDetail('edge/empty.md', 'edge/empty.md: the file is empty (or only whitespace); nothing to import')).toBe(
      'The file is empty (or only whitespace); nothing to import',
    );
    expect(plainDetail('edge/empty.md', 'empty.md: binary content')).toBe('Binary content');
    expect(plainDetail('a.md', 'already imported with this content')).toBe('Already imported with this content');
    expect(plainDetail('a.md', '')).toBe('');
  });
});

describe('choosing files', () => {
  it('knows notes suffixes and hidden paths', () => {
    expect(hasNoteSuffix('A.MD')).toBe(true);
    expect(hasNoteSuffix('x.markdown')).toBe(true);
    expect(hasNoteSuffix('x.txt')).toBe(true);
    expect(hasNoteSuffix('x.pdf')).toBe(false);
    expect(isHiddenPath('vault/.obsidian/app.md')).toBe(true);
    expect(isHiddenPath('.DS_Store')).toBe(true);
    expect(isHiddenPath('vault/notes/a.md')).toBe(false);
  });

  it('names a file by its relative path when it has one', () => {
    expect(uploadName({ name: 'a.md', webkitRelativePath: 'vault/a.md' })).toBe('vault/a.md');
    expect(uploadName({ name: 'a.md', webkitRelativePath: '' })).toBe('a.md');
    expect(uploadName({ name: 'a.md' })).toBe('a.md');
    expect(entryPath('/vault/sub/a.md', 'a.md')).toBe('vault/sub/a.md');
    expect(entryPath('', 'a.md')).toBe('a.md');
  });

  it('keeps only visible notes files of a folder', () => {
    const { keep, skipped } = splitFolderFiles([
      { path: 'v/a.md' },
      { path: 'v/img.png' },
      { path: 'v/.obsidian/x.md' },
      { path: 'v/b.txt' },
    ]);
    expect(keep.map((f) => f.path)).toEqual(['v/a.md', 'v/b.txt']);
    expect(skipped.map((f) => f.path)).toEqual(['v/img.png', 'v/.obsidian/x.md']);
  });

  it('replaces a path picked twice, in place', () => {
    const merged = mergePicks(
      [
        { path: 'a.md', v: 1 },
        { path: 'b.md', v: 1 },
      ],
      [
        { path: 'a.md', v: 2 },
        { path: 'c.md', v: 2 },
      ],
    );
    expect(merged).toEqual([
      { path: 'a.md', v: 2 },
      { path: 'b.md', v: 1 },
      { path: 'c.md', v: 2 },
    ]);
  });

  it('batches uploads by count and bytes', () => {
    expect(batchBySize([1, 1, 1, 1, 1], 2, 100)).toEqual([[0, 1], [2, 3], [4]]);
    expect(batchBySize([60, 60, 10, 200, 5], 10, 100)).toEqual([[0], [1, 2], [3], [4]]);
    expect(batchBySize([], 10, 100)).toEqual([]);
  });

  it('formats sizes', () => {
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(999)).toBe('999 bytes');
    expect(formatBytes(34_400)).toBe('34 KB');
    expect(formatBytes(1_250_000)).toBe('1.3 MB');
  });
});

describe('runRows', () => {
  it('takes rows new since the import or still running then, by part', () => {
    const oldFailed = row({ id: 'job_src_a_f0_1', phase: 'error', error: 'boom', queuedAt: '2026-01-01T00:00:00.000Z' });
    const rerunSameId = row({ id: 'job_src_a_f0_1', phase: 'queued', label: 'a.md · 1/2', queuedAt: '2026-01-02T00:00:00.000Z' });
    const part2 = row({ id: 'job_src_a_f2_2', label: 'a.md · 2/2', queuedAt: '2026-01-02T00:00:00.000Z' });
    const other = row({ source: 'src_b', queuedAt: '2026-01-02T00:00:00.000Z' });
    const baseline = makeBaseline([oldFailed]);
    const mine = runRows([part2, rerunSameId, oldFailed, other], 'src_a', baseline);
    expect(mine).toEqual([rerunSameId, part2]);
  });

  it('joins a run that was under way ("running"), its ended parts included', () => {
    const oldRun = row({ id: 'job_src_a_old_1', phase: 'done', label: 'a.md · 1/2', queuedAt: '2025-01-01T00:00:00.000Z' });
    const part1 = row({ phase: 'done', label: 'a.md · 1/3', queuedAt: '2026-01-01T00:00:00.000Z' });
    const part2 = row({ id: 'job_src_a_f2_2', phase: 'extracting', label: 'a.md · 2/3', queuedAt: '2026-01-01T00:00:00.000Z' });
    const part3 = row({ id: 'job_src_a_f3_3', phase: 'queued', label: 'a.md · 3/3', queuedAt: '2026-01-01T00:00:00.001Z' });
    const baseline = makeBaseline([oldRun, part1, part2, part3]);
    const later = [oldRun, part1, { ...part2, phase: 'done' as const }, part3];
    expect(runRows(later, 'src_a', baseline).map((r) => r.label)).toEqual(['a.md · 1/3', 'a.md · 2/3', 'a.md · 3/3']);
    expect(runRows(later, 'src_a', null)).toHaveLength(4);
  });

  it('is empty for a source that ran before and did not run again', () => {
    const ended = row({ phase: 'done' });
    expect(runRows([ended], 'src_a', makeBaseline([ended]))).toEqual([]);
  });
});

describe('fileProgress', () => {
  it('refused and unchanged files are settled at once', () => {
    expect(fileProgress({ status: 'refused' }, [], 0)).toMatchObject({ state: 'refused', settled: true });
    expect(fileProgress({ status: 'unchanged' }, [], 0)).toMatchObject({ state: 'unchanged', settled: true });
  });

  it('an accepted file with no rows waits, then is lost', () => {
    expect(fileProgress({ status: 'queued' }, [], 0)).toMatchObject({ state: 'queued', settled: false });
    expect(fileProgress({ status: 'queued' }, [], LOST_AFTER_POLLS)).toMatchObject({ state: 'lost', settled: true });
  });

  it('follows the parts to done', () => {
    const a1 = row();
    const a2 = row({ id: 'job_src_a_f2_2', label: 'a.md · 2/2' });
    let p = fileProgress({ status: 'queued' }, [a1, a2], 1);
    expect(p).toMatchObject({ state: 'queued', done: 0, total: 2, phase: 'queued', current: null, settled: false });
    expect(progressWords(p, phaseWords)).toBe('Waiting to start (2 parts)');

    p = fileProgress({ status: 'queued' }, [{ ...a1, phase: 'auditing' }, a2], 2);
    expect(p).toMatchObject({ state: 'running', phase: 'auditing', current: 1, active: 2, parts: 2 });
    expect(progressWords(p, phaseWords)).toBe('Part 1 of 2: checking against the graph');

    p = fileProgress({ status: 'queued' }, [done(), a2], 3);
    expect(p).toMatchObject({ state: 'running', done: 1, phase: 'queued', current: null });
    expect(progressWords(p, phaseWords)).toBe('1 of 2 parts done');

    p = fileProgress({ status: 'queued' }, [done(), done({ id: 'job_src_a_f2_2', label: 'a.md · 2/2' })], 4);
    expect(p).toMatchObject({ state: 'done', done: 2, total: 2, settled: true, active: 0 });
    expect(p.usage).toEqual({ jobs: 2, inputTokens: 20, outputTokens: 20, costUsd: null, requests: 2 });
    expect(p.stats.addedNodes).toBe(4);
    expect(progressWords(p, phaseWords)).toBe('Done: all 2 parts merged');
  });

  it('is failed when any part errored, settled when none runs', () => {
    const failed = row({ phase: 'error', error: 'the model could not produce a valid submit' });
    let p = fileProgress({ status: 'queued' }, [failed, row({ id: 'job_src_a_f2_2', label: 'a.md · 2/2', phase: 'extracting' })], 2);
    expect(p).toMatchObject({ state: 'failed', settled: false, errors: ['the model could not produce a valid submit'] });
    expect(progressWords(p, phaseWords)).toBe('1 of 2 parts failed (the other parts carry on)');
    p = fileProgress({ status: 'queued' }, [failed, done({ id: 'job_src_a_f2_2', label: 'a.md · 2/2' })], 3);
    expect(p).toMatchObject({ state: 'failed', settled: true });
  });

  it('is aborted when stopped', () => {
    const p = fileProgress({ status: 'running' }, [done(), row({ id: 'job_src_a_f2_2', label: 'a.md · 2/2', phase: 'aborted' })], 1);
    expect(p).toMatchObject({ state: 'aborted', settled: true });
    expect(progressWords(p, phaseWords)).toBe('Aborted after 1 of 2 parts');
  });

  it('numbers parts as the labels do when only the rest of a run is seen', () => {
    const p = fileProgress({ status: 'running' }, [row({ id: 'job_src_a_x_20', label: 'a.md · 20/28', phase: 'merging' })], 1);
    expect(progressWords(p, phaseWords)).toBe('Part 20 of 28: merging');
  });

  it('words one-part files without part numbers', () => {
    const single = row({ label: 'a.md', phase: 'extracting' });
    expect(progressWords(fileProgress({ status: 'queued' }, [single], 1), phaseWords)).toBe('Reading');
    expect(progressWords(fileProgress({ status: 'queued' }, [done({ label: 'a.md' })], 1), phaseWords)).toBe('Done: merged into your graph');
  });
});

describe('normalizeSources', () => {
  it('reads sources, keeping a missing title or kind unknown', () => {
    expect(
      normalizeSources({
        sources: [
          { id: 'src_a', title: 'a.md', kind: 'notes', propositions: 4 },
          { id: 'chat_1', title: null, kind: null, propositions: 1 },
          { title: 'no id' },
        ],
      }),
    ).toEqual([
      { id: 'src_a', title: 'a.md', kind: 'notes', propositions: 4 },
      { id: 'chat_1', title: null, kind: null, propositions: 1 },
    ]);
    expect(normalizeSources(undefined)).toEqual([]);
  });
});

describe('a big import: rows folded into its summary row, or not made yet', () => {
  const summary = normalizeActivityRow({
    id: 'imp_0123456789ab',
    source: 'imp_0123456789ab',
    kind: 'import',
    label: 'Import of vault · 1,200 files',
    phase: 'running',
    usage: {},
    queuedAt: '2026-01-01T00:00:00.000Z',
    counts: { waiting: 700, running: 4, done: 490, failed: 1, unchanged: 5, refused: 0, junk: 'x' },
    outcomes: { src_done: 'done', src_bad: 'failed', src_odd: 7 },
    errors: { src_bad: 'bad.md: the model broke down' },
  });

  it('reads the summary row defensively', () => {
    expect(summary?.kind).toBe('import');
    expect(summary?.counts).toEqual({ waiting: 700, running: 4, done: 490, failed: 1, unchanged: 5, refused: 0 });
    expect(summary?.outcomes).toEqual({ src_done: 'done', src_bad: 'failed' });
    // a summary that does not split its running files: never said as reading (issue 28 item 7)
    expect(importCountsWords(summary?.counts)).toBe('490 done · 1 failed · 700 waiting · 5 unchanged · 4 working');
    const split = { ...summary?.counts, reading: 3, merging: 1 };
    expect(importCountsWords(split)).toBe('490 done · 1 failed · 3 reading · 1 merging · 700 waiting · 5 unchanged');
  });

  it('a folded file shows its outcome, a waiting one is queued (never lost)', () => {
    const s = summary ?? undefined;
    const done = fileProgress({ status: 'queued' }, [], LOST_AFTER_POLLS + 5, foldedState(s, 'src_done'));
    expect([done.state, done.settled]).toEqual(['done', true]);
    const bad = fileProgress({ status: 'queued' }, [], LOST_AFTER_POLLS + 5, foldedState(s, 'src_bad'));
    expect([bad.state, bad.errors]).toEqual(['failed', ['bad.md: the model broke down']]);
    const waiting = fileProgress({ status: 'queued' }, [], LOST_AFTER_POLLS + 5, foldedState(s, 'src_later'));
    expect([waiting.state, waiting.settled]).toEqual(['queued', false]);
    const ended = foldedState({ ...(s as ActivityRow), phase: 'done' }, 'src_gone');
    expect(fileProgress({ status: 'queued' }, [], LOST_AFTER_POLLS, ended).state).toBe('lost');
  });
});

describe('the per-file limit at pick time (issue 18)', () => {
  const pick = (path: string, size: number) => ({ path, file: { size } });

  it('refuses a 2.1 MB file under the 2.0 MB limit, in decimal bytes (not MiB)', () => {
    const { keep, tooLarge } = splitBySize([
      pick('small.md', 1_999_999),
      pick('limit.md', 2_000_000),
      pick('mib.md', 2 * 1024 * 1024), // 2 MiB = 2,097,152 bytes: over a 2,000,000-byte limit
      pick('big.md', 2_100_000),
    ]);
    expect(keep.map((p) => p.path)).toEqual(['small.md', 'limit.md']);
    expect(tooLarge.map((p) => p.path)).toEqual(['mib.md', 'big.md']);
  });

  it('never shows a refused size as the limit itself', () => {
    expect(formatSizeOver(2_100_000)).toBe('2.1 MB');
    expect(formatSizeOver(2_000_001)).toBe('2,000,001 bytes');
  });
});


describe('earlierImportBadge (trial finding 4)', () => {
  it('never shows a failed batch as finished', () => {
    expect(earlierImportBadge({ phase: 'error', counts: { failed: 1 } })).toEqual({ state: 'failed', text: 'Failed' });
    expect(earlierImportBadge({ phase: 'done', counts: { done: 2, failed: 1 } })).toEqual({
      state: 'failed',
      text: 'Finished with failures',
    });
    expect(earlierImportBadge({ phase: 'done', counts: { done: 2, failed: 0 } })).toEqual({ state: 'done', text: 'Finished' });
    expect(earlierImportBadge({ phase: 'aborted' }).state).toBe('aborted');
    expect(earlierImportBadge({ phase: 'running', counts: { failed: 1 } }).state).toBe('running');
  });
});

describe('an import summary keeps its refusals (trial finding 4)', () => {
  it('reads them from the feed row', () => {
    const row = normalizeActivityRow({
      id: 'imp_1',
      source: 'imp_1',
      kind: 'import',
      label: 'notes · 2 files',
      phase: 'done',
      refusals: { 'empty.md': 'empty.md: holds no text', bad: 3 },
    });
    expect(row?.refusals).toEqual({ 'empty.md': 'empty.md: holds no text' });
  });
});

describe('what an import asks (issue 28, items 4 and 5)', () => {
  it('reads an ask answer with the notes of that name, and a removal', () => {
    const files = normalizeImportFiles({
      importId: 'imp_000000000001',
      files: [
        {
          name: 'notes.md',
          sourceId: null,
          status: 'ask',
          detail: 'notes.md: a note of this name is already in your graph',
          sameName: [{ sourceId: 'src_a', title: 'notes.md', at: '2026-12-06T10:00:00Z' }, { title: 'no id' }, 'junk'],
        },
        { name: 'vault/b.md', sourceId: 'src_b', status: 'removed', detail: 'vault/b.md: removed as you confirmed' },
      ],
    });
    expect(files.map((f) => f.status)).toEqual(['ask', 'removed']);
    expect(files[0].sameName).toEqual([{ sourceId: 'src_a', title: 'notes.md', at: '2026-12-06T10:00:00Z' }]);
    expect(files[1].sameName).toEqual([]);
    expect(askWords(files[0])).toBe(
      'A note named notes.md is already in your graph with other content. Does this file replace it, or is it a new note? Nothing is imported until you say.',
    );
    expect(askWords({ name: 'notes.md', sameName: [files[0].sameName[0], { sourceId: 'src_c', title: 'notes.md (2)', at: '' }] })).toContain(
      '2 notes named notes.md are already in your graph',
    );
    expect(importedOn('2026-12-06T10:00:00Z')).toBe('imported 6 Dec 2026');
    expect(importedOn('')).toBe('');
    expect(importedOn('not a time')).toBe('');
    const removed = fileProgress(files[1], [], 0);
    expect([removed.state, removed.settled]).toEqual(['removed', true]);
    expect(progressWords(removed, phaseWords)).toBe('Removed: what it said is taken out of your graph');
  });

  it('finds the folders of a pick and words the gone notes', () => {
    expect(folderRoots(['vault/a.md', 'notes.md', 'vault/sub/b.md', 'other/c.md', '/abs.md'])).toEqual(['vault', 'other']);
    const gone = normalizeGone({
      gone: [
        { sourceId: 'src_b', path: 'vault/b.md', title: 'b.md', propositions: 3 },
        { sourceId: 'src_c', path: 'vault/sub/c.md', propositions: 'x' },
        { path: 'no id' },
      ],
    });
    expect(gone).toEqual([
      { sourceId: 'src_b', path: 'vault/b.md', title: 'b.md', propositions: 3 },
      { sourceId: 'src_c', path: 'vault/sub/c.md', title: 'vault/sub/c.md', propositions: 0 },
    ]);
    expect(goneWords(gone, ['vault'])).toBe('2 notes are no longer in vault: what they said (3 propositions) is still in your graph.');
    expect(goneWords(gone.slice(1), ['vault', 'other'])).toBe('1 note is no longer in the folders you picked: what it said is still in your graph.');
    expect(normalizeGone(null)).toEqual([]);
  });
});
