import { describe, expect, it, vi } from 'vitest';
import { DEBOUNCE_MS, EventHub, MAX_WAIT_MS, mentions, parseServerEvent, type HeardEvent } from './events';

function fakeTimers() {
  let now = 0;
  let next = 1;
  const pending = new Map<number, { at: number; fn: () => void }>();
  return {
    timers: {
      set: (fn: () => void, ms: number) => {
        const id = next++;
        pending.set(id, { at: now + ms, fn });
        return id;
      },
      clear: (id: unknown) => void pending.delete(id as number),
      now: () => now,
    },
    advance(ms: number) {
      now += ms;
      for (const [id, t] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
        if (t.at <= now) {
          pending.delete(id);
          t.fn();
        }
      }
    },
    get size() {
      return pending.size;
    },
  };
}

describe('EventHub (seed §10.4, consumer laws)', () => {
  it('coalesces a burst into one trailing call per window', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const calls: HeardEvent[][] = [];
    hub.subscribe(['activity-changed'], { current: (e) => calls.push(e) });
    for (let i = 0; i < 5; i++) {
      hub.dispatch({ name: 'activity-changed', data: {} });
      clock.advance(100); // each event restarts the window
    }
    expect(calls).toHaveLength(0);
    clock.advance(DEBOUNCE_MS);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(5);
  });

  it('a steady stream is still heard: the window closes at most MAX_WAIT_MS after its first event', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const calls: HeardEvent[][] = [];
    hub.subscribe(['activity-changed'], { current: (e) => calls.push(e) });
    const step = 200; // under the debounce: each event alone would postpone the call forever
    for (let t = 0; t < 3 * MAX_WAIT_MS; t += step) {
      hub.dispatch({ name: 'activity-changed', data: {} });
      clock.advance(step);
    }
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]).toHaveLength(MAX_WAIT_MS / step); // the events of the first second, at once
    clock.advance(DEBOUNCE_MS);
    expect(calls.flat()).toHaveLength((3 * MAX_WAIT_MS) / step); // none lost
  });

  it('hands each consumer only its events, and resync to everyone', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const chats = vi.fn();
    const graph = vi.fn();
    hub.subscribe(['chats-changed', 'turn-started'], { current: chats });
    hub.subscribe(['graph-changed'], { current: graph });
    hub.dispatch({ name: 'turn-started', data: { chatId: 'c1' } });
    clock.advance(DEBOUNCE_MS);
    expect(chats).toHaveBeenCalledTimes(1);
    expect(graph).not.toHaveBeenCalled();
    hub.dispatch({ name: 'resync', data: {} });
    clock.advance(DEBOUNCE_MS);
    expect(chats).toHaveBeenCalledTimes(2);
    expect(graph).toHaveBeenCalledTimes(1);
  });

  it('reads the handler through its ref, never a stale closure', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const seen: string[] = [];
    const ref = { current: (_: HeardEvent[]) => seen.push('old') };
    hub.subscribe(['graph-changed'], ref);
    hub.dispatch({ name: 'graph-changed', data: {} });
    ref.current = () => seen.push('new'); // a re-render replaced it before the window closed
    clock.advance(DEBOUNCE_MS);
    expect(seen).toEqual(['new']);
  });

  it('an unsubscribed consumer hears nothing more and leaves no timer behind', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const handler = vi.fn();
    const stop = hub.subscribe(['graph-changed'], { current: handler });
    hub.dispatch({ name: 'graph-changed', data: {} });
    stop();
    expect(clock.size).toBe(0);
    clock.advance(DEBOUNCE_MS);
    expect(handler).not.toHaveBeenCalled();
    expect(hub.size).toBe(0);
  });

  it('one failing consumer does not keep the event from the others', () => {
    const clock = fakeTimers();
    const hub = new EventHub(clock.timers);
    const good = vi.fn();
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    hub.subscribe(['chats-changed'], {
      current: () => {
        throw new Error('boom');
      },
    });
    hub.subscribe(['chats-changed'], { current: good });
    hub.dispatch({ name: 'chats-changed', data: {} });
    clock.advance(DEBOUNCE_MS);
    expect(good).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });
});

describe('parseServerEvent', () => {
  it('keeps known events with a chat id and refuses the rest', () => {
    expect(parseServerEvent('turn-started', '{"chatId":"c1"}')).toEqual({ name: 'turn-started', data: { chatId: 'c1' } });
    expect(parseServerEvent('graph-changed', '{}')).toEqual({ name: 'graph-changed', data: {} });
    expect(parseServerEvent('resync', '{}')).toEqual({ name: 'resync', data: {} });
    expect(parseServerEvent('chat-changed', '{}')).toBeNull();
    expect(parseServerEvent('turn-started', 'not json')).toBeNull();
    expect(parseServerEvent('turn-started', '[1]')).toBeNull();
    expect(parseServerEvent('turn-started', '{"chatId":3}')).toEqual({ name: 'turn-started', data: {} });
  });

  it('mentions: a turn of this chat, or a resync', () => {
    expect(mentions([{ name: 'turn-settled', data: { chatId: 'c1' } }], 'c1')).toBe(true);
    expect(mentions([{ name: 'turn-settled', data: { chatId: 'c2' } }], 'c1')).toBe(false);
    expect(mentions([{ name: 'resync', data: {} }], 'c1')).toBe(true);
  });
});
