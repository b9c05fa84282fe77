// The subscription logins' status, kept current (issue 19 item 2; shared by Settings >
// Subscriptions and the first screen, issue 29 item 2): read on mount, on
// `subscriptions-changed` from the events channel, and, in the desktop app, every 2 s while a
// device code waits to be entered.

import { useCallback, useEffect, useState } from 'react';
import { useServerEvents } from '../../serverEvents';
import { anyPending, plainSubscriptionError, type SubscriptionsClient, type SubscriptionStatus } from './subscriptionsClient';

const PENDING_POLL_MS = 2000;

/** `status` (null until the first read), `loadError` (the last read's failure in plain words, or
 * null), `setStatus` (a row's action answers the new status) and `refresh`. `also` runs after
 * each read (Settings reads background consent with it); pass a stable callback. */
export function useSubscriptionStatus(client: SubscriptionsClient, also?: () => Promise<void>) {
  const [status, setStatus] = useState<SubscriptionStatus | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setStatus(await client.status());
      setLoadError(null);
    } catch (err) {
      setLoadError(plainSubscriptionError(err));
    }
    if (also) await also();
  }, [client, also]);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  useServerEvents(['subscriptions-changed'], () => void refresh());

  const pending = anyPending(status);
  useEffect(() => {
    if (client.mode !== 'desktop' || !pending) return;
    const timer = setInterval(() => void refresh(), PENDING_POLL_MS);
    return () => clearInterval(timer);
  }, [client.mode, pending, refresh]);

  return { status, setStatus, loadError, refresh };
}
