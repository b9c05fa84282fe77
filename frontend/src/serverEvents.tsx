import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { EventHub, parseServerEvent, SERVER_EVENTS, type HeardEvent, type ServerEventName } from './core/events';

// Exactly one EventSource per window (GET /api/events), mounted at the root; consumers subscribe
// through useServerEvents. The browser reconnects by itself (the server's `retry: 2000`); every
// (re)open is a `resync` for every consumer, so nothing missed while disconnected stays missed.

// Two contexts: the hub (one per window, never changes) and whether the channel is open. A
// consumer's subscription depends on the hub alone: were it to hang on `connected`, the open that
// flips it would re-subscribe every consumer, and a re-subscription drops what is queued (the
// open's own `resync`: a page whose first read was served before the channel opened, with the
// change landing in between, then stayed stale for good; seen in CI on the home and exam pages).
const HubContext = createContext<EventHub | null>(null);
const ConnectedContext = createContext(false);

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

  return (
    <HubContext.Provider value={hub}>
      <ConnectedContext.Provider value={connected}>{children}</ConnectedContext.Provider>
    </HubContext.Provider>
  );
}

/**
 * Call `handler` with each debounced batch of these server events (and with `resync` when the
 * channel (re)opens). The handler is read through a ref: it always sees the latest render.
 */
export function useServerEvents(names: readonly ServerEventName[], handler: (events: HeardEvent[]) => void): void {
  const hub = useContext(HubContext);
  const ref = useRef(handler);
  ref.current = handler;
  const key = names.join(',');
  useEffect(() => {
    if (!hub) return;
    return hub.subscribe(key.split(',') as ServerEventName[], ref);
  }, [hub, key]);
}

export function useEventsConnected(): boolean {
  return useContext(ConnectedContext);
}
