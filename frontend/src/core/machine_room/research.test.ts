import { describe, expect, it } from 'vitest';
import { normalizeResearchSettings, researchDraft, researchDraftsEqual, researchStatus, researchUpdate } from './research';

describe('research settings', () => {
  it('are read defensively; keys are booleans only', () => {
    expect(normalizeResearchSettings(null)).toEqual({ provider: null, googleCx: null, baseUrl: null, keys: { tavily: false, brave: false, google: false } });
    const s = normalizeResearchSettings({ provider: 'google', googleCx: 'abc', baseUrl: '', keys: { google: true, brave: 'yes' } });
    expect(s.provider).toBe('google');
    expect(s.baseUrl).toBeNull();
    expect(s.keys).toEqual({ tavily: false, brave: false, google: true });
    expect(normalizeResearchSettings({ provider: 'bing' }).provider).toBeNull();
  });

  it('a draft becomes the PUT body, the cx only for Google', () => {
    expect(researchUpdate({ provider: '', googleCx: 'x', baseUrl: 'http://x' })).toEqual({
      update: { provider: null, googleCx: null, baseUrl: null },
      problems: [],
    });
    expect(researchUpdate({ provider: 'tavily', googleCx: 'x', baseUrl: ' http://127.0.0.1:9/ ' }).update).toEqual({
      provider: 'tavily',
      googleCx: null,
      baseUrl: 'http://127.0.0.1:9/',
    });
    expect(researchUpdate({ provider: 'google', googleCx: ' cx1 ', baseUrl: '' }).update).toEqual({ provider: 'google', googleCx: 'cx1', baseUrl: null });
  });

  it('refuses Google without a cx and a base URL that is not http(s)', () => {
    expect(researchUpdate({ provider: 'google', googleCx: ' ', baseUrl: '' }).update).toBeNull();
    expect(researchUpdate({ provider: 'brave', googleCx: '', baseUrl: 'ftp://x' }).problems).toEqual(['The base URL must start with http:// or https://.']);
  });

  it('drafts compare by what they would save', () => {
    const saved = researchDraft(normalizeResearchSettings({ provider: 'tavily' }));
    expect(researchDraftsEqual(saved, { ...saved, googleCx: 'ignored' })).toBe(true);
    expect(researchDraftsEqual(saved, { ...saved, provider: 'brave' })).toBe(false);
  });

  it('say what the saved settings mean', () => {
    expect(researchStatus(normalizeResearchSettings({}))).toMatch(/not offered the research tool/);
    expect(researchStatus(normalizeResearchSettings({ provider: 'brave' }))).toMatch(/no key is stored/);
    expect(researchStatus(normalizeResearchSettings({ provider: 'brave', keys: { brave: true } }))).toBe('The teacher may research the web with Brave Search.');
  });
});
