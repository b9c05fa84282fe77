import { describe, expect, it } from 'vitest';
import { normalizePending, pendingWords, readCountdown } from '../machine_room/activity';
import { canFlush, coverageWords, coveredFraction, isBusy, normalizeCoverage, normalizeFlush, ringLabel } from './lessonGraph';
import { libraryDraft, libraryUpdate, normalizeLibrarySettings, teacherReadsGraph } from '../machine_room/librarySettings';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function coverage(partial: Record<string, unknown> = {}) {
  const c = normalizeCoverage({
    coveredTokens: 30,
    uncoveredTokens: 10,
    coveredMessages: 3,
    uncoveredMessages: 1,
    budgetTokens: 8192,
    running: false,
    jobs: [],
    pending: null,
    ...partial,
  });
  if (!c) throw new Error('unreadable');
  return c;
}

describe('lesson coverage', () => {
  it('reads the answer and says what is in the graph', () => {
    const c = coverage({ pending: { source: 'c_1', label: 'Heaps', waitingFor: 'idle', flushAt: '2026-01-01T00:04:00Z' } });
    expect(c.totalTokens).toBe(40);
    expect(coveredFraction(c)).toBe(0.75);
    expect(ringLabel(c)).toBe('75%');
    expect(canFlush(c)).toBe(true);
    expect(isBusy(c)).toBe(false);
    expect(coverageWords(c, NOW)).toBe(
      '75% is in your graph; 1 message (about 10 tokens) is not in it yet. It is read into your graph in 4 min unless you continue, when you leave the lesson, or now from the menu.',
    );
  });

  it('says the same countdown as the dock at every moment, in sentences', () => {
    const flushAt = '2026-01-01T00:05:00Z';
    const c = coverage({ coveredTokens: 0, coveredMessages: 0, uncoveredMessages: 2, pending: { source: 'c_1', label: 'Heaps', waitingFor: 'idle', flushAt } });
    const [pending] = normalizePending({ pending: [{ source: 'c_1', label: 'Heaps', waitingFor: 'idle', flushAt }] });
    const due = Date.parse(flushAt);
    // every second of the last five minutes, and the moments a rounding could split the two
    for (let left = 0; left <= 300; left += 1) {
      for (const shift of [0, 1, 499, 500, 501, 999]) {
        const now = due - left * 1000 + shift;
        const words = coverageWords(c, now);
        const dock = pendingWords(pending, now);
        const when = readCountdown(flushAt, now);
        expect(when).not.toBeNull();
        expect(dock).toContain(when as string);
        expect(words).toContain(when === 'now' ? 'read into your graph now' : `read into your graph ${when} unless you continue`);
        expect(words).toMatch(/^[A-Z0-9][^]*\.$/);
        expect(words).not.toMatch(/not yet\./);
      }
    }
    expect(readCountdown(flushAt, due - 270_000)).toBe('in 5 min');
    expect(readCountdown(flushAt, due - 240_000)).toBe('in 4 min');
    expect(readCountdown(flushAt, due - 30_000)).toBe('in 30 s');
    expect(readCountdown(flushAt, due + 5_000)).toBe('now');
    expect(readCountdown('junk', due)).toBeNull();
    expect(coverageWords(c, due - 120_000)).toBe(
      '2 messages (about 10 tokens) are not in your graph yet. They are read into your graph in 2 min unless you continue, when you leave the lesson, or now from the menu.',
    );
  });

  it('a running job, an all-covered and an untaught lesson', () => {
    const running = coverage({ running: true, jobs: [{ id: 'j', label: 'Heaps', phase: 'queued' }] });
    expect(isBusy(running)).toBe(true);
    expect(canFlush(running)).toBe(false);
    expect(coverageWords(running, NOW)).toBe('Being read into your graph (Heaps: queued).');
    const all = coverage({ uncoveredTokens: 0, uncoveredMessages: 0 });
    expect(ringLabel(all)).toBe('all');
    expect(canFlush(all)).toBe(false);
    const none = coverage({ coveredTokens: 0, uncoveredTokens: 0, coveredMessages: 0, uncoveredMessages: 0 });
    expect(ringLabel(none)).toBe('—');
    expect(coveredFraction(none)).toBe(0);
    expect(normalizeCoverage('junk')).toBeNull();
  });

  it('reads a flush answer defensively', () => {
    expect(normalizeFlush({ status: 'deferred', detail: 'later', coverage: null })).toEqual({ status: 'deferred', detail: 'later', coverage: null });
    expect(normalizeFlush({ status: 'bogus' }).status).toBe('missing');
  });
});

describe('pending lessons', () => {
  it('reads the feed and says when a lesson is read', () => {
    const pending = normalizePending({
      pending: [
        { source: 'c_1', label: 'Heaps', waitingFor: 'idle', flushAt: '2026-01-01T00:00:30Z' },
        { source: 'c_2', label: 'Trees', waitingFor: 'turn', flushAt: null },
        { junk: true },
      ],
    });
    expect(pending.map((p) => p.source)).toEqual(['c_1', 'c_2']);
    expect(pendingWords(pending[0], NOW)).toBe('read into your graph in 30 s unless you continue');
    expect(pendingWords(pending[1], NOW)).toBe('read into your graph when the reply being written ends');
    expect(normalizePending(null)).toEqual([]);
  });
});

describe('library settings form', () => {
  it('round-trips minutes and refuses what the server would', () => {
    const s = normalizeLibrarySettings({ extractionChunkTokens: 2000, lessonIdleSeconds: 90, graphTools: false, graphEnabled: false });
    const d = libraryDraft(s);
    expect(d).toEqual({ chunkTokens: '2000', idleMinutes: '1.5', graphTools: false, graphEnabled: false });
    expect(libraryUpdate(d).update).toEqual(s);
    expect(libraryUpdate({ ...d, chunkTokens: '499' }).problems).toHaveLength(1);
    expect(libraryUpdate({ ...d, idleMinutes: '0.1' }).problems).toHaveLength(1);
    expect(libraryUpdate({ ...d, chunkTokens: '2000.5', idleMinutes: '' }).problems).toHaveLength(2);
    expect(normalizeLibrarySettings(null)).toEqual({ extractionChunkTokens: 8192, lessonIdleSeconds: 300, graphTools: true, graphEnabled: true });
    expect(teacherReadsGraph({ graphTools: true, graphEnabled: true })).toBe(true);
    expect(teacherReadsGraph({ graphTools: true, graphEnabled: false })).toBe(false);
    expect(teacherReadsGraph({ graphTools: false, graphEnabled: true })).toBe(false);
  });
});
