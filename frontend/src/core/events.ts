// The window's side of the events channel (seed §10.4), pure: which consumers hear which server
// events, each through a trailing debounce (with a maximum wait, so a steady stream of events
// still refreshes about once a second), plus one call to every consumer when the channel
// (re)opens (the resync law). The EventSource itself lives in serverEvents.tsx.

export const SERVER_EVENTS = [
  'turn-started',
  'turn-settled',
  'jobs-changed',
  'activity-changed',
  'chats-changed',
  'graph-changed',
  'subscriptions-changed',
] as const;
export type ServerEventName = (typeof SERVER_EVENTS)[number];

/** What a consumer hears: a server event with its data, or `resync` ((re)connected, or the
 * server says this window fell behind): refetch everything you show. */
export type HeardEvent = { name: ServerEventName; data: { chatId?: string } } | { name: 'resync'; data: Record<string, never> };

export const DEBOUNCE_MS = 250;
/** The longest a consumer's first queued event waits, in ms: each event restarts the ~250 ms
 * window, so without it a steady stream (an import's rows every 200 ms) would never be heard. */
export const MAX_WAIT_MS = 1000;

export interface Timers {
  set: (fn: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
  /** Milliseconds on a monotonic clock. */
  now: () => number;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
};

interface Consumer {
  names: ReadonlySet<string>;
  /** The consumer's current handler (a ref: never a stale closure). */
  handler: { current: (events: HeardEvent[]) => void };
  debounceMs: number;
  maxWaitMs: number;
  queued: HeardEvent[];
  /** When the first event of the open window was queued (`Timers.now`). */
  since: number;
  timer: unknown;
}

/** Consumers registered by name; `dispatch` hands each matching consumer the events of one
 * debounce window at once (trailing: the window restarts on each event, ~250 ms, but closes at
 * the latest `maxWaitMs` after its first event). */
export class EventHub {
  private consumers = new Set<Consumer>();

  constructor(private timers: Timers = realTimers) {}

  subscribe(
    names: readonly ServerEventName[],
    handler: { current: (events: HeardEvent[]) => void },
    debounceMs = DEBOUNCE_MS,
    maxWaitMs = MAX_WAIT_MS,
  ): () => void {
    const consumer: Consumer = { names: new Set(names), handler, debounceMs, maxWaitMs, queued: [], since: 0, timer: null };
    this.consumers.add(consumer);
    return () => {
      if (consumer.timer !== null) this.timers.clear(consumer.timer);
      this.consumers.delete(consumer);
    };
  }

  /** A server event, or `resync` (every consumer hears it). Unknown names are ignored. */
  dispatch(event: HeardEvent): void {
    for (const consumer of [...this.consumers]) {
      if (event.name !== 'resync' && !consumer.names.has(event.name)) continue;
      const now = this.timers.now();
      if (consumer.queued.length === 0) consumer.since = now;
      consumer.queued.push(event);
      if (consumer.timer !== null) this.timers.clear(consumer.timer);
      const wait = Math.max(0, Math.min(consumer.debounceMs, consumer.since + consumer.maxWaitMs - now));
      consumer.timer = this.timers.set(() => {
        consumer.timer = null;
        const batch = consumer.queued;
        consumer.queued = [];
        if (!this.consumers.has(consumer)) return;
        try {
          consumer.handler.current(batch);
        } catch (err) {
          console.error('an events consumer failed', err);
        }
      }, wait);
    }
  }

  get size(): number {
    return this.consumers.size;
  }
}

/** Parse one SSE message of the channel; null when it is not one of ours. */
export function parseServerEvent(name: string, raw: string): HeardEvent | null {
  if (name === 'resync') return { name: 'resync', data: {} };
  if (!(SERVER_EVENTS as readonly string[]).includes(name)) return null;
  try {
    const data = JSON.parse(raw) as unknown;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
    const chatId = (data as { chatId?: unknown }).chatId;
    return { name: name as ServerEventName, data: typeof chatId === 'string' ? { chatId } : {} };
  } catch {
    return null;
  }
}

/** Whether a batch names a chat (a `turn-*` event for it) or asks for a resync. */
export function mentions(events: readonly HeardEvent[], chatId: string): boolean {
  return events.some((e) => e.name === 'resync' || e.data.chatId === chatId);
}
