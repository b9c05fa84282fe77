import { describe, expect, it } from 'vitest';
import { hold, type Timers } from './held';

function fakeTimers(): Timers & { fire: () => void; pending: number } {
  let run: (() => void) | null = null;
  const t = {
    pending: 0,
    set: (r: () => void) => {
      run = r;
      t.pending += 1;
      return 1;
    },
    clear: () => {
      if (run) t.pending -= 1;
      run = null;
    },
    fire: () => run?.(),
  };
  return t;
}

describe('hold', () => {
  it('commits once when its time is up', () => {
    const timers = fakeTimers();
    let runs = 0;
    const held = hold(() => (runs += 1), 6000, timers);
    expect(held.waiting()).toBe(true);
    timers.fire();
    held.now();
    expect(runs).toBe(1);
    expect(held.undo()).toBe(false);
  });

  it('never commits once undone', () => {
    const timers = fakeTimers();
    let runs = 0;
    const held = hold(() => (runs += 1), 6000, timers);
    expect(held.undo()).toBe(true);
    timers.fire();
    held.now();
    expect(runs).toBe(0);
    expect(timers.pending).toBe(0);
  });

  it('commits at once on now, and not again at the time', () => {
    const timers = fakeTimers();
    let runs = 0;
    const held = hold(() => (runs += 1), 6000, timers);
    held.now();
    timers.fire();
    expect(runs).toBe(1);
    expect(held.waiting()).toBe(false);
  });
});
