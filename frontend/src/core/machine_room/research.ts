// The web research settings (GET/PUT /api/settings/research): which search provider the
// Workbench's researcher uses. With none, the teacher is not offered the `research` tool.
// Keys go through the ordinary key endpoints (PUT/DELETE /api/keys/{provider}).

export const SEARCH_PROVIDERS = ['tavily', 'brave', 'google'] as const;
export type SearchProvider = (typeof SEARCH_PROVIDERS)[number];

export const SEARCH_PROVIDER_LABEL: Record<SearchProvider, string> = {
  tavily: 'Tavily',
  brave: 'Brave Search',
  google: 'Google Programmable Search',
};

export interface ResearchSettings {
  provider: SearchProvider | null;
  googleCx: string | null;
  baseUrl: string | null;
  /** Whether a key is stored for each provider (the key itself is never sent). */
  keys: Record<SearchProvider, boolean>;
}

export interface ResearchUpdate {
  provider: SearchProvider | null;
  googleCx: string | null;
  baseUrl: string | null;
}

/** The form: '' is "no provider" and "not set". */
export interface ResearchDraft {
  provider: SearchProvider | '';
  googleCx: string;
  baseUrl: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isSearchProvider(value: unknown): value is SearchProvider {
  return typeof value === 'string' && (SEARCH_PROVIDERS as readonly string[]).includes(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

export function normalizeResearchSettings(raw: unknown): ResearchSettings {
  const r = isRecord(raw) ? raw : {};
  const keys = isRecord(r.keys) ? r.keys : {};
  return {
    provider: isSearchProvider(r.provider) ? r.provider : null,
    googleCx: text(r.googleCx),
    baseUrl: text(r.baseUrl),
    keys: { tavily: keys.tavily === true, brave: keys.brave === true, google: keys.google === true },
  };
}

export function researchDraft(settings: ResearchSettings): ResearchDraft {
  return { provider: settings.provider ?? '', googleCx: settings.googleCx ?? '', baseUrl: settings.baseUrl ?? '' };
}

/** The PUT body of a draft, or the problems to fix first. The cx is only kept for Google. */
export function researchUpdate(draft: ResearchDraft): { update: ResearchUpdate | null; problems: string[] } {
  const problems: string[] = [];
  const provider = draft.provider === '' ? null : draft.provider;
  const cx = draft.googleCx.trim();
  const baseUrl = draft.baseUrl.trim();
  if (provider === 'google' && !cx) problems.push('Google Programmable Search needs its search engine id (cx).');
  if (provider && baseUrl && !/^https?:\/\/\S+$/i.test(baseUrl)) problems.push('The base URL must start with http:// or https://.');
  if (problems.length) return { update: null, problems };
  return {
    update: { provider, googleCx: provider === 'google' ? cx : null, baseUrl: provider && baseUrl ? baseUrl : null },
    problems,
  };
}

export function researchDraftsEqual(a: ResearchDraft, b: ResearchDraft): boolean {
  const norm = (d: ResearchDraft) => [d.provider, d.provider === 'google' ? d.googleCx.trim() : '', d.provider ? d.baseUrl.trim() : ''].join('\n');
  return norm(a) === norm(b);
}

/** What the saved settings mean for the lesson, in a sentence. */
export function researchStatus(settings: ResearchSettings): string {
  if (!settings.provider) return 'Web research is off: the teacher is not offered the research tool.';
  const name = SEARCH_PROVIDER_LABEL[settings.provider];
  if (!settings.keys[settings.provider]) return `${name} is chosen, but no key is stored for it yet: the teacher is not offered research until one is.`;
  if (settings.provider === 'google' && !settings.googleCx) return `${name} is chosen, but its search engine id (cx) is missing.`;
  return `The teacher may research the web with ${name}.`;
}
