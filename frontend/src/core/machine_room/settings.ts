import { SLOTS, type ModelRef, type Settings, type SettingsUpdate, type Slot } from '../types';

// ---------------------------------------------------------------------------
// Banner shown on every page

export type Banner =
  | { kind: 'offline'; model: string; error: string | null; crash: string | null }
  | { kind: 'problems'; problems: string[] }
  | null;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

export function bannerFor(settings: Settings | null | undefined): Banner {
  if (!settings) return null;
  const strong = settings.resolved?.strong ?? null;
  if (strong === null) {
    const problems = (settings.problems ?? []).filter((p) => typeof p === 'string' && p.trim());
    return {
      kind: 'problems',
      problems: problems.length ? problems : ['No model is set up for lessons.'],
    };
  }
  if (strong.offline === true) {
    const error = text(settings.offline?.error);
    // a crash whose restart worked clears `error` within a second: the banner keeps saying what
    // happened until the offline model answers a turn well again (`recentCrash`)
    const crash = error === null ? text(settings.offline?.recentCrash) : null;
    return { kind: 'offline', model: strong.model, error, crash };
  }
  return null;
}

// ---------------------------------------------------------------------------
// Settings form

export const NOT_SET = '';

export interface SlotDraft {
  /** Provider name, or NOT_SET ('') for "slot not configured" (null). */
  provider: string;
  model: string;
  baseUrl: string;
}

export type SettingsDraft = Record<Slot, SlotDraft>;

/** What the app calls each provider wherever one is chosen (Settings, a lesson's own model). */
export const PROVIDER_LABEL: Record<string, string> = {
  openrouter: 'OpenRouter',
  openai: 'OpenAI',
  'openai-compatible': 'OpenAI-compatible server',
  local: 'Local offline demo model',
  chatgpt: 'ChatGPT subscription',
  'github-copilot-subscription': 'GitHub Copilot subscription',
  'xai-subscription': 'xAI subscription',
  deepgram: 'Deepgram (dictation)',
};

/** A provider id in plain words ("openai-compatible" → "OpenAI-compatible server"); an unknown id as is. */
export function providerLabel(provider: string): string {
  return PROVIDER_LABEL[provider] ?? provider;
}

/** The providers offered when the server's settings do not list any (yet). */
export const FALLBACK_PROVIDERS: readonly string[] = ['openrouter', 'openai', 'openai-compatible', 'local'];

/**
 * The provider ids a provider picker offers, in order: the server's list (GET /api/settings
 * `providers`; FALLBACK_PROVIDERS when missing or empty), then `current` when it is set and not
 * listed (a provider the server no longer lists stays selectable, so opening a form loses nothing).
 * Duplicates and empty ids are dropped; NOT_SET ('') is never an entry here.
 */
export function providerOptions(listed: readonly string[] | null | undefined, current: string = NOT_SET): string[] {
  const base = listed?.length ? listed : FALLBACK_PROVIDERS;
  const out: string[] = [];
  for (const p of [...base, current]) {
    if (typeof p === 'string' && p !== NOT_SET && !out.includes(p)) out.push(p);
  }
  return out;
}

export function needsBaseUrl(provider: string): boolean {
  return provider === 'openai-compatible';
}

export function draftFromSettings(settings: Pick<Settings, 'models'>): SettingsDraft {
  const draft = {} as SettingsDraft;
  for (const slot of SLOTS) {
    const m = settings.models?.[slot] ?? null;
    draft[slot] = m
      ? { provider: m.provider ?? NOT_SET, model: m.model ?? '', baseUrl: m.baseUrl ?? '' }
      : { provider: NOT_SET, model: '', baseUrl: '' };
  }
  return draft;
}

/** Problems the user must fix before saving; empty = OK. */
/** The model id field's example for a provider (an OpenRouter id only for OpenRouter). */
export function modelPlaceholder(provider: string): string {
  switch (provider) {
    case 'openrouter':
      return 'e.g. anthropic/claude-sonnet-4';
    case 'openai':
      return 'e.g. gpt-4o-mini';
    case 'openai-compatible':
      return 'the model name your server lists, e.g. llama3.1:8b';
    case 'local':
      return 'not needed: the offline demo model';
    case 'chatgpt':
      return 'e.g. gpt-5-codex (connect the subscription below)';
    case 'github-copilot-subscription':
      return 'e.g. gpt-4o (connect the subscription below)';
    case 'xai-subscription':
      return 'e.g. grok-4 (connect the subscription below)';
    default:
      return '';
  }
}

/** The offline demo model's id, sent when the learner leaves its model field empty (there is
 * only one offline model; the server's `OFFLINE_MODEL`, core/machine_room/model_slots.py). */
export const OFFLINE_MODEL_ID = 'SmolLM2-135M-Instruct';

/** The model id a draft sends: as typed, or the offline model's for `local` left empty (the
 * new-user trial was asked for an id the offline model does not need). */
export function modelIdOf(d: { provider: string; model: string }): string {
  const typed = d.model.trim();
  return d.provider === 'local' && !typed ? OFFLINE_MODEL_ID : typed;
}

/** What the Settings page calls each slot; errors name a slot this way, never by its key. */
export const SLOT_LABELS: Record<Slot, string> = { strong: 'Strong model', cheap: 'Cheap model', vision: 'Vision model' };

export function validateDraft(draft: SettingsDraft): string[] {
  const errors: string[] = [];
  for (const slot of SLOTS) {
    const d = draft[slot];
    if (d.provider === NOT_SET) continue;
    if (!d.model.trim() && d.provider !== 'local') errors.push(`${SLOT_LABELS[slot]}: enter a model id (or choose "Not set").`);
    const url = d.baseUrl.trim();
    if (needsBaseUrl(d.provider) && url && !/^https?:\/\/\S+$/i.test(url)) {
      errors.push(`${SLOT_LABELS[slot]}: the base URL must start with http:// or https://.`);
    }
  }
  return errors;
}

/** Body for PUT /api/settings. */
export function draftToUpdate(draft: SettingsDraft): SettingsUpdate {
  const models = {} as Record<Slot, ModelRef | null>;
  for (const slot of SLOTS) {
    const d = draft[slot];
    if (d.provider === NOT_SET) {
      models[slot] = null;
      continue;
    }
    const ref: ModelRef = { provider: d.provider, model: modelIdOf(d) };
    if (needsBaseUrl(d.provider)) ref.baseUrl = d.baseUrl.trim() || null;
    models[slot] = ref;
  }
  return { models };
}

export function draftsEqual(a: SettingsDraft, b: SettingsDraft): boolean {
  return JSON.stringify(draftToUpdate(a)) === JSON.stringify(draftToUpdate(b));
}

// ---------------------------------------------------------------------------
// Labels

/** Where a present key lives, in words ('' when unknown): `source` of keysClient's KeyPresence. */
export function keySourceLabel(source: string | null | undefined): string {
  switch (source) {
    case 'app':
      return 'kept by this app, encrypted';
    case 'env':
      return 'from an environment variable';
    case 'keyring':
      return 'in the OS keychain';
    case 'file':
      return 'in an owner-only key file';
    default:
      return '';
  }
}

export function resolvedLabel(settings: Settings, slot: Slot): string {
  const r = settings.resolved?.[slot] ?? null;
  // An unset vision slot is optional (nothing else needs it): say so, not as a failure.
  if (!r && slot === 'vision' && !settings.models?.vision) return 'Optional, not set: choose a model that reads images if you want to share pictures.';
  if (!r) return 'Cannot run with the current settings and keys.';
  const base = `Runs ${r.model} via ${r.provider}`;
  return r.offline ? `${base} (tiny offline demo model)` : base;
}
