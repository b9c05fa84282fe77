import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_STEP, TRANSCRIPT_WINDOW, revealEarlier, transcriptWindow } from './transcriptWindow';

describe('transcriptWindow', () => {
  it('draws a short lesson whole', () => {
    expect(transcriptWindow(0, TRANSCRIPT_WINDOW)).toEqual({ start: 0, hidden: 0, next: 0 });
    expect(transcriptWindow(12, TRANSCRIPT_WINDOW)).toEqual({ start: 0, hidden: 0, next: 0 });
    expect(transcriptWindow(200, 200)).toEqual({ start: 0, hidden: 0, next: 0 });
  });

  it('draws the most recent messages of a long lesson', () => {
    const w = transcriptWindow(10_000, TRANSCRIPT_WINDOW);
    expect(w).toEqual({ start: 9_800, hidden: 9_800, next: TRANSCRIPT_STEP });
  });

  it('stays anchored to the end as the lesson grows (the new reply is drawn, the oldest leaves)', () => {
    expect(transcriptWindow(10_002, 200).start).toBe(9_802);
    expect(transcriptWindow(201, 200)).toEqual({ start: 1, hidden: 1, next: 1 });
  });

  it('never draws nothing, whatever the limit', () => {
    expect(transcriptWindow(50, 0).start).toBe(49);
    expect(transcriptWindow(50, -3).start).toBe(49);
    expect(transcriptWindow(50, Number.POSITIVE_INFINITY).start).toBe(0);
  });
});

describe('revealEarlier', () => {
  it('reveals one step more, and no more than there is', () => {
    expect(revealEarlier(10_000, 200)).toBe(400);
    expect(transcriptWindow(10_000, revealEarlier(10_000, 200)).start).toBe(9_600);
    expect(revealEarlier(250, 200)).toBe(250);
    expect(transcriptWindow(250, revealEarlier(250, 200))).toEqual({ start: 0, hidden: 0, next: 0 });
    expect(revealEarlier(100, 200)).toBe(100);
  });

  it('reaches the first message of 10,000 in a bounded number of steps', () => {
    let limit = TRANSCRIPT_WINDOW;
    let clicks = 0;
    while (transcriptWindow(10_000, limit).hidden > 0) {
      limit = revealEarlier(10_000, limit);
      clicks++;
    }
    expect(clicks).toBe(49);
    expect(limit).toBe(10_000);
  });
});
