// The Library's settings (GET/PUT /api/library/settings): when a lesson is read into the graph and
// whether the teacher may look at the graph. Pure helpers for the Settings page's form.

export interface LibrarySettings {
  /** New teaching (estimated tokens) that has a lesson read into the graph at once; also each job's size. */
  extractionChunkTokens: number;
  /** Seconds without a turn after which a lesson's new teaching is read anyway. */
  lessonIdleSeconds: number;
  /** The teacher may look at your graph (list_sessions, list_propositions). */
  graphTools: boolean;
  /** Lessons use the graph at all (`graph.enabled`, decision 0030): off, the teacher gets no graph tools whatever `graphTools` says. */
  graphEnabled: boolean;
}

export const LIBRARY_DEFAULTS: LibrarySettings = { extractionChunkTokens: 8192, lessonIdleSeconds: 300, graphTools: true, graphEnabled: true };
export const CHUNK_TOKENS_MIN = 500;
export const CHUNK_TOKENS_MAX = 200_000;
export const IDLE_MINUTES_MIN = 0.5;
export const IDLE_MINUTES_MAX = 7 * 24 * 60;

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function normalizeLibrarySettings(raw: unknown): LibrarySettings {
  const r = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return {
    extractionChunkTokens: num(r.extractionChunkTokens, LIBRARY_DEFAULTS.extractionChunkTokens),
    lessonIdleSeconds: num(r.lessonIdleSeconds, LIBRARY_DEFAULTS.lessonIdleSeconds),
    graphTools: typeof r.graphTools === 'boolean' ? r.graphTools : LIBRARY_DEFAULTS.graphTools,
    graphEnabled: typeof r.graphEnabled === 'boolean' ? r.graphEnabled : LIBRARY_DEFAULTS.graphEnabled,
  };
}

/** Whether the teacher is given the graph tools: both switches on (seed §6). */
export function teacherReadsGraph(s: Pick<LibrarySettings, 'graphTools' | 'graphEnabled'>): boolean {
  return s.graphTools && s.graphEnabled;
}

/** The form's text fields: tokens, and the idle delay in minutes. */
export interface LibraryDraft {
  chunkTokens: string;
  idleMinutes: string;
  graphTools: boolean;
  graphEnabled: boolean;
}

export function libraryDraft(s: LibrarySettings): LibraryDraft {
  const minutes = s.lessonIdleSeconds / 60;
  return {
    chunkTokens: String(s.extractionChunkTokens),
    idleMinutes: String(Number.isInteger(minutes) ? minutes : Number(minutes.toFixed(2))),
    graphTools: s.graphTools,
    graphEnabled: s.graphEnabled,
  };
}

/** The PUT body, or the problems to fix first (in plain words). */
export function libraryUpdate(d: LibraryDraft): { update: LibrarySettings | null; problems: string[] } {
  const problems: string[] = [];
  const tokens = Number(d.chunkTokens.trim());
  if (!d.chunkTokens.trim() || !Number.isInteger(tokens) || tokens < CHUNK_TOKENS_MIN || tokens > CHUNK_TOKENS_MAX) {
    problems.push(`Lesson size: a whole number of tokens from ${CHUNK_TOKENS_MIN} to ${CHUNK_TOKENS_MAX.toLocaleString('en-US')}.`);
  }
  const minutes = Number(d.idleMinutes.trim());
  if (!d.idleMinutes.trim() || !Number.isFinite(minutes) || minutes < IDLE_MINUTES_MIN || minutes > IDLE_MINUTES_MAX) {
    problems.push(`Idle time: from ${IDLE_MINUTES_MIN} minutes to a week (${IDLE_MINUTES_MAX.toLocaleString('en-US')} minutes).`);
  }
  if (problems.length) return { update: null, problems };
  return {
    update: {
      extractionChunkTokens: tokens,
      lessonIdleSeconds: Math.round(minutes * 60 * 1000) / 1000,
      graphTools: d.graphTools,
      graphEnabled: d.graphEnabled,
    },
    problems,
  };
}

export function libraryDraftsEqual(a: LibraryDraft, b: LibraryDraft): boolean {
  return a.chunkTokens.trim() === b.chunkTokens.trim() && a.idleMinutes.trim() === b.idleMinutes.trim() && a.graphTools === b.graphTools && a.graphEnabled === b.graphEnabled;
}
