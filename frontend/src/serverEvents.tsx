import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { EventHub, parseServerEvent, SERVER_EVENTS, type HeardEvent, type ServerEventName } from './core/events';

// Exactly one EventSource per window (GET /api/events), mounted at the root; consumers subscribe
// through useServerEvents. The browser reconnects by itself (the server's `retry: 2000`); every
// (re)open is a `resync` for every consumer, so nothing missed while disconnected stays missed.

interface ServerEvents {
  hub: EventHub;
  /** Whether the channel is open (false while it reconnects). */
  connected: boolean;
}

const ServerEventsContext = createContext<ServerEvents | null>(null);

export function ServerEventsProvider({ children }: { children: ReactNode }) {
  const hub = useMemo(() => new EventHub(), []);
  const [connected, setConnected] = useState(false);

  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const source = new EventSource('/api/events');
    const onOpen = () => {
      setConnected(true);
      hub.dispatch({ name: 'resync', data: {} });
    };
    const onError = () => setConnected(source.readyState === EventSource.OPEN);
    source.addEventListener('open', onOpen);
    source.addEventListener('error', onError);
    const listeners = [...SERVER_EVENTS, 'resync'].map((name) => {
      const listener = (e: MessageEvent<string>) => {
        const event = parseServerEvent(name, e.data);
        if (event) hub.dispatch(event);
      };
      source.addEventListener(name, listener as EventListener);
      return [name, listener] as const;
    });
    return () => {
      source.removeEventListener('open', onOpen);
      source.removeEventListener('error', onError);
      for (const [name, listener] of listeners) source.removeEventListener(name, listener as EventListener);
      source.close();
    };
  }, [hub]);

  const value = useMemo(() => ({ hub, connected }), [hub, connected]);
  return <ServerEventsContext.Provider value={value}>{children}</ServerEventsContext.Provider>;
}

/**
 * Call `handler` with each debounced batch of these server events (and with `resync` when the
 * channel (re)opens). The handler is read through a ref: it always sees the latest render.
 */
export function useServerEvents(names: readonly ServerEventName[], handler: (events: HeardEvent[]) => void): void {
  const ctx = useContext(ServerEventsContext);
  const ref = useRef(handler);
  ref.current = handler;
  const key = names.join(',');
  useEffect(() => {
    if (!ctx) return;
    return ctx.hub.subscribe(key.split(',') as ServerEventName[], ref);
  }, [ctx, key]);
}

export function useEventsConnected(): boolean {
  return useContext(ServerEventsContext)?.connected ?? false;
}
