import { describe, expect, it } from 'vitest';
import {
  bannerFor,
  draftFromSettings,
  draftToUpdate,
  draftsEqual,
  keySourceLabel,
  FALLBACK_PROVIDERS,
  modelPlaceholder,
  providerOptions,
  resolvedLabel,
  validateDraft,
} from './settings';
import type { Settings } from '../types';

function settings(partial: Partial<Settings> = {}): Settings {
  return {
    models: {
      strong: { provider: 'openrouter', model: 'anthropic/claude-sonnet-4', baseUrl: null },
      cheap: null,
      vision: { provider: 'openai-compatible', model: 'llava', baseUrl: 'http://localhost:1234/v1' },
    },
    providers: ['openrouter', 'openai', 'openai-compatible', 'local'],
    keys: { openrouter: { set: false, source: null } },
    offline: { available: true, running: true, model: 'SmolLM2-135M-Instruct' },
    resolved: {
      strong: { provider: 'local', model: 'SmolLM2-135M-Instruct', offline: true },
      cheap: null,
      vision: null,
    },
    problems: ['strong: no API key for openrouter'],
    ...partial,
  };
}

describe('bannerFor', () => {
  it('is null before settings load and when a real model runs', () => {
    expect(bannerFor(null)).toBeNull();
    expect(
      bannerFor(settings({ resolved: { strong: { provider: 'openrouter', model: 'x', offline: false }, cheap: null, vision: null } })),
    ).toBeNull();
  });

  it('reports the offline demo model', () => {
    expect(bannerFor(settings())).toEqual({ kind: 'offline', model: 'SmolLM2-135M-Instruct', error: null, crash: null });
  });

  it('says what is wrong with the offline model when it failed', () => {
    const error = 'the offline model crashed (signal 11) during its self-check, and again after one restart';
    const s = settings({ offline: { available: true, running: false, model: 'SmolLM2-135M-Instruct', error } });
    expect(bannerFor(s)).toEqual({ kind: 'offline', model: 'SmolLM2-135M-Instruct', error, crash: null });
    const blank = settings({ offline: { available: true, running: true, model: 'SmolLM2-135M-Instruct', error: '  ' } });
    expect(bannerFor(blank)).toEqual({ kind: 'offline', model: 'SmolLM2-135M-Instruct', error: null, crash: null });
  });

  it('keeps a crash whose restart worked until the next good turn', () => {
    const crash = 'the offline model crashed (signal 11) while answering';
    const offline = { available: true, running: true, model: 'SmolLM2-135M-Instruct', error: null, lastCrash: crash };
    // restarted well (error cleared) but no good turn yet: the banner says what happened
    const restarted = settings({ offline: { ...offline, recentCrash: crash } });
    expect(bannerFor(restarted)).toEqual({ kind: 'offline', model: 'SmolLM2-135M-Instruct', error: null, crash });
    // a good turn since: lastCrash is history, the banner is the plain offline notice again
    const answered = settings({ offline: { ...offline, recentCrash: null } });
    expect(bannerFor(answered)).toEqual({ kind: 'offline', model: 'SmolLM2-135M-Instruct', error: null, crash: null });
    // a current error wins over the crash that led to it
    const failing = settings({ offline: { ...offline, error: `${crash}; restarting it`, recentCrash: crash } });
    expect(bannerFor(failing)).toEqual({
      kind: 'offline',
      model: 'SmolLM2-135M-Instruct',
      error: `${crash}; restarting it`,
      crash: null,
    });
  });

  it('lists problems when strong cannot run', () => {
    const s = settings({ resolved: { strong: null, cheap: null, vision: null } });
    expect(bannerFor(s)).toEqual({ kind: 'problems', problems: ['strong: no API key for openrouter'] });
    expect(bannerFor({ ...s, problems: [] })).toEqual({ kind: 'problems', problems: ['No model is set up for lessons.'] });
  });
});

describe('settings draft', () => {
  it('round-trips server models', () => {
    const s = settings();
    const draft = draftFromSettings(s);
    expect(draft.cheap).toEqual({ provider: '', model: '', baseUrl: '' });
    expect(draftToUpdate(draft)).toEqual({
      models: {
        strong: { provider: 'openrouter', model: 'anthropic/claude-sonnet-4' },
        cheap: null,
        vision: { provider: 'openai-compatible', model: 'llava', baseUrl: 'http://localhost:1234/v1' },
      },
    });
  });

  it('trims, and sends baseUrl null for an empty openai-compatible URL', () => {
    const draft = draftFromSettings(settings());
    draft.vision = { provider: 'openai-compatible', model: ' m ', baseUrl: '  ' };
    draft.strong = { provider: 'openai', model: 'gpt-4o', baseUrl: 'http://ignored' };
    const body = draftToUpdate(draft);
    expect(body.models.vision).toEqual({ provider: 'openai-compatible', model: 'm', baseUrl: null });
    expect(body.models.strong).toEqual({ provider: 'openai', model: 'gpt-4o' });
  });

  it('validates model ids and URLs', () => {
    const draft = draftFromSettings(settings());
    expect(validateDraft(draft)).toEqual([]);
    draft.strong.model = '  ';
    draft.vision.baseUrl = 'localhost:1234';
    expect(validateDraft(draft)).toEqual([
      'Strong model: enter a model id (or choose "Not set").',
      'Vision model: the base URL must start with http:// or https://.',
    ]);
  });

  it('compares drafts by what would be sent', () => {
    const a = draftFromSettings(settings());
    const b = draftFromSettings(settings());
    b.strong.baseUrl = 'irrelevant for openrouter';
    expect(draftsEqual(a, b)).toBe(true);
    b.strong.model = 'other';
    expect(draftsEqual(a, b)).toBe(false);
  });
});

describe('labels', () => {
  it('describes key sources', () => {
    expect(keySourceLabel('app')).toMatch(/this app/);
    expect(keySourceLabel('env')).toMatch(/environment/);
    expect(keySourceLabel('keyring')).toMatch(/keychain/);
    expect(keySourceLabel('file')).toMatch(/file/);
    expect(keySourceLabel(null)).toBe('');
    expect(keySourceLabel('nope')).toBe('');
  });

  it('describes what a slot runs', () => {
    const s = settings();
    expect(resolvedLabel(s, 'strong')).toBe('Runs SmolLM2-135M-Instruct via local (tiny offline demo model)');
    expect(resolvedLabel(s, 'cheap')).toBe('Cannot run with the current settings and keys.');
    // an unset vision slot is optional, never worded as a failure (issue 18)
    expect(resolvedLabel({ ...s, models: { ...s.models, vision: null } }, 'vision')).toMatch(/^Optional, not set/);
  });

  it('gives each provider its own model id example', () => {
    expect(modelPlaceholder('openrouter')).toContain('anthropic/claude-sonnet-4');
    expect(modelPlaceholder('openai-compatible')).not.toContain('/');
    expect(modelPlaceholder('openai')).toContain('gpt');
  });
});

describe('providerOptions', () => {
  it("offers the server's list in its order", () => {
    expect(providerOptions(['openai', 'openrouter'], 'openai')).toEqual(['openai', 'openrouter']);
  });

  it('falls back when the server lists none', () => {
    expect(providerOptions(undefined)).toEqual([...FALLBACK_PROVIDERS]);
    expect(providerOptions(null, '')).toEqual([...FALLBACK_PROVIDERS]);
    expect(providerOptions([], 'openai')).toEqual([...FALLBACK_PROVIDERS]);
  });

  it('keeps a current provider the server no longer lists, last and once', () => {
    expect(providerOptions(['openai'], 'chatgpt')).toEqual(['openai', 'chatgpt']);
    expect(providerOptions(['openai', 'openai'], 'openai')).toEqual(['openai']);
  });

  it('never lists the not-set value', () => {
    expect(providerOptions(['openai', ''], '')).toEqual(['openai']);
  });
});
