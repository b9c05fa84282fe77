import { describe, expect, it } from 'vitest';
import { MAX_DRAFTS, draftOf, keepDraft } from './questionDrafts';

// The module keeps one in-memory map for the page's life, so each test uses its own ids.
describe('question drafts (seed §5: a submitted draft survives an optimistic unmount)', () => {
  it('has no draft for a question never touched', () => {
    expect(draftOf('t-untouched')).toEqual({});
  });

  it('gives a remounted question the choice it had', () => {
    keepDraft('t-quiz', { chosen: 2 });
    expect(draftOf('t-quiz').chosen).toBe(2);
    keepDraft('t-quiz', { chosen: 0 }); // a change of mind replaces it; 0 is a choice, not "none"
    expect(draftOf('t-quiz').chosen).toBe(0);
    keepDraft('t-quiz', { chosen: null }); // cleared
    expect(draftOf('t-quiz').chosen).toBeNull();
  });

  it('merges updates: a typed answer and a choice of the same question both stay', () => {
    keepDraft('t-ask', { text: 'Because the slope' });
    keepDraft('t-ask', { chosen: 1 });
    expect(draftOf('t-ask')).toEqual({ text: 'Because the slope', chosen: 1 });
    keepDraft('t-ask', { text: 'Because the slope changes' });
    expect(draftOf('t-ask')).toEqual({ text: 'Because the slope changes', chosen: 1 });
  });

  it('keeps each question apart', () => {
    keepDraft('t-a', { chosen: 1 });
    keepDraft('t-b', { chosen: 3 });
    expect(draftOf('t-a').chosen).toBe(1);
    expect(draftOf('t-b').chosen).toBe(3);
  });

  it('is bounded: past the limit the oldest question is forgotten, the newest kept', () => {
    keepDraft('t-oldest', { chosen: 1 });
    for (let i = 0; i < MAX_DRAFTS; i++) keepDraft(`t-fill-${i}`, { text: String(i) });
    expect(draftOf('t-oldest')).toEqual({});
    expect(draftOf(`t-fill-${MAX_DRAFTS - 1}`)).toEqual({ text: String(MAX_DRAFTS - 1) });
    keepDraft(`t-fill-${MAX_DRAFTS - 1}`, { chosen: 2 }); // updating a kept one evicts nothing more
    expect(draftOf(`t-fill-${MAX_DRAFTS - 2}`)).toEqual({ text: String(MAX_DRAFTS - 2) });
  });

  it('hands out a copy: mutating what it returned changes nothing kept', () => {
    keepDraft('t-copy', { chosen: 1 });
    const got = draftOf('t-copy');
    got.chosen = 3;
    expect(draftOf('t-copy').chosen).toBe(1);
  });
});
