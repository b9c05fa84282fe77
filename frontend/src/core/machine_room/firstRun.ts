/**
 * The first screen (issue 29, item 2): with no real teacher set up, home offers, in this order, a
 * subscription sign-in, a pasted key (one test call: works, or why not), a model server already
 * running on this computer (its models picked per slot), and last the offline demo. Pure: what the
 * screen decides and sends; the component is components/machine_room/FirstRun.tsx.
 */
import { SLOTS, type ModelRef, type Settings, type Slot } from '../types';

/** Whether home leads to the first screen: settings are read and lessons would run on nothing or
 * only on the offline demo model. */
export function needsTeacher(settings: Pick<Settings, 'resolved'> | null | undefined): boolean {
  if (!settings) return false;
  const strong = settings.resolved?.strong ?? null;
  return strong === null || strong.offline === true;
}

// ---------------------------------------------------------------------------
// A pasted key

/** The providers a key is pasted for, in the order offered. */
export const KEY_TEST_PROVIDERS = ['openrouter', 'openai', 'openai-compatible'] as const;
export type KeyTestProvider = (typeof KEY_TEST_PROVIDERS)[number];

/** The model a new key is tested with (and then teaches), unless the learner names another. */
export const DEFAULT_KEY_MODEL: Record<KeyTestProvider, string> = {
  openrouter: 'anthropic/claude-sonnet-4',
  openai: 'gpt-4o-mini',
  'openai-compatible': '',
};

/** The model a subscription teaches with once connected, unless the learner names another. */
export const DEFAULT_SUBSCRIPTION_MODEL: Record<string, string> = {
  chatgpt: 'gpt-5-codex',
  'github-copilot-subscription': 'gpt-4o',
  'xai-subscription': 'grok-4',
};

export interface KeyTestBody {
  key: string;
  slot: ModelRef;
}

/** The body of POST /api/first-run/key-test, or what the learner must fix first (plain words). */
export function keyTestBody(provider: KeyTestProvider, key: string, model: string, baseUrl: string): KeyTestBody | string {
  const k = key.trim();
  if (!k) return 'Paste your API key first.';
  if (/\s/.test(k)) return 'The key holds spaces or line breaks; paste it exactly as the provider shows it.';
  const m = model.trim();
  if (!m) return 'Enter the model to use, for example ' + (DEFAULT_KEY_MODEL[provider] || 'the name your server lists') + '.';
  if (provider === 'openrouter' && !m.includes('/')) return 'OpenRouter names a model by its maker and name, for example anthropic/claude-sonnet-4.';
  if (provider === 'openai-compatible') {
    const url = baseUrl.trim();
    if (!/^https?:\/\/\S+$/i.test(url)) return 'Enter the server’s address, starting with http:// or https://.';
    return { key: k, slot: { provider, model: m, baseUrl: url } };
  }
  return { key: k, slot: { provider, model: m } };
}

export interface KeyTestResult {
  works: boolean;
  detail: string;
}

export function normalizeKeyTest(raw: unknown): KeyTestResult {
  const r = (raw ?? {}) as { works?: unknown; detail?: unknown };
  const works = r.works === true;
  const detail = typeof r.detail === 'string' && r.detail.trim() ? r.detail : works ? 'Works.' : 'The test call did not work.';
  return { works, detail };
}

/** The slots after choosing `ref` to teach: strong is `ref`; cheap and vision stay as they were. */
export function withStrong(models: Settings['models'] | null | undefined, ref: ModelRef): Record<Slot, ModelRef | null> {
  const next = {} as Record<Slot, ModelRef | null>;
  for (const slot of SLOTS) next[slot] = models?.[slot] ?? null;
  next.strong = ref;
  return next;
}

// ---------------------------------------------------------------------------
// A model server on this computer

export interface LocalServer {
  key: string;
  name: string;
  port: number;
  baseUrl: string;
  models: string[];
}

export interface LocalServers {
  servers: LocalServer[];
  asked: { key: string; name: string; port: number }[];
}

function isText(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** GET /api/first-run/local-servers, checked: entries of another shape are dropped. */
export function normalizeLocalServers(raw: unknown): LocalServers {
  const r = (raw ?? {}) as { servers?: unknown; asked?: unknown };
  const servers: LocalServer[] = [];
  for (const s of Array.isArray(r.servers) ? r.servers : []) {
    const v = (s ?? {}) as Partial<Record<keyof LocalServer, unknown>>;
    if (!isText(v.key) || !isText(v.name) || typeof v.port !== 'number' || !isText(v.baseUrl)) continue;
    servers.push({ key: v.key, name: v.name, port: v.port, baseUrl: v.baseUrl, models: Array.isArray(v.models) ? v.models.filter(isText) : [] });
  }
  const asked: LocalServers['asked'] = [];
  for (const a of Array.isArray(r.asked) ? r.asked : []) {
    const v = (a ?? {}) as { key?: unknown; name?: unknown; port?: unknown };
    if (isText(v.key) && isText(v.name) && typeof v.port === 'number') asked.push({ key: v.key, name: v.name, port: v.port });
  }
  return { servers, asked };
}

/** What was asked, in words: "Ollama (port 11434), LM Studio (port 1234) and Jan (port 1337)". */
export function askedWords(asked: LocalServers['asked']): string {
  const parts = asked.map((a) => `${a.name} (port ${a.port})`);
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** A cheap or vision pick that leaves the slot unset ("same as the strong model" / "not set"). */
export const UNSET = '';

export type SlotPicks = Record<Slot, string>;

/** The first picks for a server: its first model teaches; cheap follows it; vision is not set. */
export function initialPicks(server: LocalServer): SlotPicks {
  return { strong: server.models[0] ?? UNSET, cheap: UNSET, vision: UNSET };
}

/** The three slots for a server and the models picked (UNSET leaves a slot unset: cheap then runs
 * the strong model). Null when no strong model is picked. */
export function localSlots(server: LocalServer, picks: SlotPicks): Record<Slot, ModelRef | null> | null {
  if (!picks.strong) return null;
  const ref = (model: string): ModelRef | null => (model ? { provider: 'openai-compatible', model, baseUrl: server.baseUrl } : null);
  return { strong: ref(picks.strong), cheap: ref(picks.cheap), vision: ref(picks.vision) };
}
