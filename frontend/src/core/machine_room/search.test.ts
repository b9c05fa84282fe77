import { describe, expect, it } from 'vitest';
import { kindWord, readComplete, readResults, searchText, windowToShow } from './search';

describe('search results', () => {
  it('reads well-formed results and drops malformed ones', () => {
    const raw = {
      results: [
        { kind: 'message', id: 'c1', target: 'm1', label: 'Derivatives', href: '/chat/c1?m=m1', snippet: [{ text: 'the ', match: false }, { text: 'slope', match: true }] },
        { kind: 'virus', id: 'x', href: '/x' },
        { kind: 'lesson', id: 'c2', href: '//evil.example/' },
        { kind: 'lesson', id: 'c3', href: 'https://evil.example/' },
        null,
        { kind: 'proposition', id: 'n1', href: '/?node=n1', label: '', snippet: [{ text: 3 }, { text: 'x', match: 'yes' }] },
      ],
    };
    expect(readResults(raw)).toEqual([
      { kind: 'message', id: 'c1', target: 'm1', label: 'Derivatives', href: '/chat/c1?m=m1', snippet: [{ text: 'the ', match: false }, { text: 'slope', match: true }] },
      { kind: 'proposition', id: 'n1', target: '', label: 'Untitled', href: '/?node=n1', snippet: [{ text: 'x', match: false }] },
    ]);
    expect(readResults(null)).toEqual([]);
    expect(readComplete({ complete: false })).toBe(false);
    expect(readComplete({ results: [] })).toBe(true);
    expect(readResults({ results: 'no' })).toEqual([]);
  });

  it('names kinds, widens the window and skips wordless queries', () => {
    expect(kindWord('problem')).toBe('Practice problem');
    expect(windowToShow(500, 10)).toBe(490);
    expect(windowToShow(500, 499)).toBe(1);
    expect(windowToShow(5, 9)).toBe(1);
    expect(searchText(' "*" ')).toBeNull();
    expect(searchText('é')).toBe('é');
    expect(searchText('x'.repeat(300))).toHaveLength(200);
  });
});
