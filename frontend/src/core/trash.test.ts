import { describe, expect, it } from 'vitest';
import { currentToasts, dismissToast, pushToast, subscribeToasts } from './toasts';
import { daysLeft, deletedToast, entryLine, entryTitle, normalizeTrash } from './trash';

describe('normalizeTrash', () => {
  it('keeps well-formed entries and drops the rest', () => {
    const list = normalizeTrash({
      days: 30,
      entries: [
        { id: 'c_1', kind: 'lesson', title: 'Heaps', deletedAt: '2026-03-01T00:00:00Z', purgeAt: '2026-03-31T00:00:00Z', files: [] },
        { id: 'ps_1', kind: 'practiceSet', title: 7 },
        { id: '', kind: 'lesson' },
        { id: 'x', kind: 'graph' },
        null,
      ],
    });
    expect(list.days).toBe(30);
    expect(list.entries.map((e) => e.id)).toEqual(['c_1', 'ps_1']);
    expect(list.entries[1].title).toBe('');
  });

  it('answers an empty trash for garbage', () => {
    expect(normalizeTrash(null)).toEqual({ entries: [], days: 30 });
    expect(normalizeTrash({ entries: 'no', days: -1 })).toEqual({ entries: [], days: 30 });
  });
});

describe('words', () => {
  const now = Date.parse('2026-03-02T00:00:00Z');
  it('counts whole days left, never below zero', () => {
    expect(daysLeft('2026-03-31T00:00:00Z', now)).toBe(29);
    expect(daysLeft('2026-03-02T00:00:01Z', now)).toBe(1);
    expect(daysLeft('2026-02-01T00:00:00Z', now)).toBe(0);
    expect(daysLeft('soon', now)).toBeNull();
  });

  it('says what an entry is and when it goes', () => {
    const entry = { id: 'c', kind: 'lesson' as const, title: '', deletedAt: '', purgeAt: '2026-03-03T00:00:00Z' };
    expect(entryTitle(entry)).toBe('Untitled lesson');
    expect(entryLine(entry, now)).toBe('Lesson · removed for good in 1 day');
    expect(entryLine({ ...entry, kind: 'practiceSet', purgeAt: '2026-03-01T00:00:00Z' }, now)).toBe('Problem set · removed for good today');
    expect(entryLine({ ...entry, purgeAt: '?' }, now)).toBe('Lesson');
    expect(deletedToast('practiceSet', 'Heaps')).toBe('Deleted “Heaps”. It stays in the trash for 30 days (Settings → Trash).');
  });
});

describe('toasts', () => {
  it('pushes, tells listeners and dismisses', () => {
    const seen: number[] = [];
    const stop = subscribeToasts((t) => seen.push(t.length));
    const id = pushToast({ text: 'Deleted', action: { label: 'Undo', run: () => undefined } });
    expect(currentToasts().find((t) => t.id === id)?.ms).toBe(10_000);
    dismissToast(id);
    dismissToast(id);
    stop();
    pushToast({ text: 'unseen', ms: 5 });
    expect(seen).toEqual([1, 0]);
  });
});
