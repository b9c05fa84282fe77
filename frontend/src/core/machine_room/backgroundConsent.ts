// Background consent per subscription (issue 30 item 1, decision 0030; seed §5.1, §8.1):
// GET/PUT /api/background-consent. Whether work the learner did not start (a finished research,
// demo or visual waking its lesson, or entering a running reply) may use each subscription.
// Independent per provider, default ON; off, finished results wait (nothing is lost).

export const CONSENT_PROVIDERS = ['chatgpt', 'github-copilot-subscription', 'xai-subscription'] as const;
export type ConsentProvider = (typeof CONSENT_PROVIDERS)[number];
export type BackgroundConsent = Record<ConsentProvider, boolean>;

export const ALL_CONSENTED: BackgroundConsent = {
  chatgpt: true,
  'github-copilot-subscription': true,
  'xai-subscription': true,
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The server's answer as the consent map: a provider missing or not a boolean is ON (the default). */
export function normalizeBackgroundConsent(raw: unknown): BackgroundConsent {
  const r = isRecord(raw) ? raw : {};
  const out = { ...ALL_CONSENTED };
  for (const p of CONSENT_PROVIDERS) if (r[p] === false) out[p] = false;
  return out;
}

/** The PUT body for one provider's switch. */
export function consentChange(provider: ConsentProvider, allowed: boolean): { provider: ConsentProvider; allowed: boolean } {
  return { provider, allowed };
}

/** What the switch means, in plain words, for its current state. */
export function consentWords(allowed: boolean): string {
  return allowed
    ? 'Finished research, demos and visuals may continue a lesson on this subscription on their own.'
    : 'Finished research, demos and visuals wait until you switch this on; nothing is lost, and nothing runs on this subscription unless you send a message.';
}
