// GET/PUT /api/background-consent (issue 30 item 1, decision 0030). The same server routes in the
// web and the desktop app: consent is a setting of this app, not a credential.

import { ApiError } from '../../core/errors';
import { consentChange, normalizeBackgroundConsent, type BackgroundConsent, type ConsentProvider } from '../../core/machine_room/backgroundConsent';

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface BackgroundConsentClient {
  get(): Promise<BackgroundConsent>;
  set(provider: ConsentProvider, allowed: boolean): Promise<BackgroundConsent>;
}

async function call(fetcher: Fetch, init?: RequestInit): Promise<BackgroundConsent> {
  const res = await fetcher('/api/background-consent', init);
  if (!res.ok) {
    let detail = '';
    try {
      detail = await res.text();
    } catch {
      // ApiError falls back to the status
    }
    throw new ApiError(res.status, detail);
  }
  return normalizeBackgroundConsent(await res.json());
}

export function backgroundConsentClient(fetcher: Fetch = (input, init) => fetch(input, init)): BackgroundConsentClient {
  return {
    get: () => call(fetcher, { headers: { accept: 'application/json' } }),
    set: (provider, allowed) =>
      call(fetcher, {
        method: 'PUT',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(consentChange(provider, allowed)),
      }),
  };
}
