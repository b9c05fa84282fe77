import { describe, expect, it } from 'vitest';
import { ALL_CONSENTED, CONSENT_PROVIDERS, consentChange, consentWords, normalizeBackgroundConsent } from './backgroundConsent';

describe('background consent', () => {
  it('is on by default for every subscription', () => {
    expect(normalizeBackgroundConsent(null)).toEqual(ALL_CONSENTED);
    expect(normalizeBackgroundConsent([])).toEqual(ALL_CONSENTED);
    expect(Object.keys(normalizeBackgroundConsent({}))).toEqual([...CONSENT_PROVIDERS]);
  });

  it('is read independently per provider; only a real false switches one off', () => {
    expect(normalizeBackgroundConsent({ 'xai-subscription': false, chatgpt: 'no', openai: false })).toEqual({
      chatgpt: true,
      'github-copilot-subscription': true,
      'xai-subscription': false,
    });
  });

  it('says what each state means and builds the PUT body', () => {
    expect(consentWords(true)).toMatch(/on their own/);
    expect(consentWords(false)).toMatch(/nothing is lost/);
    expect(consentChange('chatgpt', false)).toEqual({ provider: 'chatgpt', allowed: false });
  });
});
