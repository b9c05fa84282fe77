// One clock for every countdown on the page (the dock's pending rows, the lesson menu's coverage
// words): a single timer ticks at whole seconds and every subscriber reads the same `now`, so two
// views of one countdown never show different numbers at the same moment (issue 29).
import { useSyncExternalStore } from 'react';

let now = Date.now();
let timer: number | null = null;
const listeners = new Set<() => void>();

function tick(): void {
  now = Date.now();
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    now = Date.now();
    timer = window.setInterval(tick, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      window.clearInterval(timer);
      timer = null;
    }
  };
}

/** The shared page clock: milliseconds since the epoch, updated once a second while anyone reads it. */
export function useSecondClock(): number {
  return useSyncExternalStore(subscribe, () => now);
}
