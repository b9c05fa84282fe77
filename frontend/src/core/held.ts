/**
 * A confirmed action held back for a few seconds so that it can be undone before anything is
 * sent (issue 31 item 6: graph deletions). `hold` runs `commit` after `ms` unless `undo` is called
 * first; `now` runs it at once (the page is left meanwhile). It runs at most once.
 */

export interface Held {
  /** Cancel: `commit` never runs. False when it ran (or was undone) already. */
  undo: () => boolean;
  /** Run it now instead of waiting (no-op when it ran or was undone). */
  now: () => void;
  /** Whether it is still waiting. */
  waiting: () => boolean;
}

export interface Timers {
  set: (run: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
}

const realTimers: Timers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Hold `commit` for `ms` milliseconds (timers injected in tests). */
export function hold(commit: () => void, ms: number, timers: Timers = realTimers): Held {
  let state: 'waiting' | 'done' = 'waiting';
  const fire = () => {
    if (state !== 'waiting') return;
    state = 'done';
    timers.clear(handle);
    commit();
  };
  const handle = timers.set(fire, ms);
  return {
    undo: () => {
      if (state !== 'waiting') return false;
      state = 'done';
      timers.clear(handle);
      return true;
    },
    now: fire,
    waiting: () => state === 'waiting',
  };
}

/** How long a graph deletion waits for Undo before it is sent, in milliseconds. */
export const GRAPH_UNDO_MS = 6_000;
