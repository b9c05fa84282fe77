// Shapes of the backend's JSON (camelCase). Kept free of runtime code so that
// both src/api.ts and the pure helpers in src/core can use them.

export const SLOTS = ['strong', 'cheap', 'vision'] as const;
export type Slot = (typeof SLOTS)[number];

/** Providers that take an API key (PUT/DELETE /api/keys/{provider}). */
export const KEY_PROVIDERS = ['openrouter', 'openai', 'openai-compatible'] as const;
export type KeyProvider = (typeof KEY_PROVIDERS)[number];

export interface ModelRef {
  provider: string;
  model: string;
  baseUrl?: string | null;
}

export interface ResolvedModel {
  provider: string;
  model: string;
  offline: boolean;
}

export interface KeyStatus {
  set: boolean;
  source: 'env' | 'keyring' | 'file' | 'app' | null;
}

export interface OfflineInfo {
  available: boolean;
  running: boolean;
  model: string | null;
  /** What is wrong with the offline model now, in plain words (e.g. "the offline model crashed (signal 11) ..."). */
  error?: string | null;
  /** The last crash (or hang) of a child that had been answering, in plain words. */
  lastCrash?: string | null;
  /** `lastCrash` until the offline model next answers a turn well (null after that). */
  recentCrash?: string | null;
  restarts?: number;
  /** Tokens it writes per second of a turn on this computer, measured by the server (null before its first reply). */
  tokensPerSecond?: number | null;
  /** Seconds its next reply is expected to take, from that speed (null before its first reply). */
  expectedWaitS?: number | null;
  /** The background build of llama.cpp started by `make run` (issue 29); null when none ran. */
  build?: OfflineBuildInfo | null;
}

/** `GET /api/settings` offline.build: the server's background build of llama.cpp. */
export interface OfflineBuildInfo {
  state: 'building' | 'installed' | 'failed';
  step?: number;
  steps?: number;
  stepName?: string;
  /** Files compiled of `total` in this step (or a percentage of 100 when `percent`). */
  done?: number;
  total?: number;
  percent?: boolean;
  elapsedS?: number;
  /** Seconds the current step still needs, from its pace so far (null: not known yet). */
  remainingS?: number | null;
  error?: string | null;
  /** One plain sentence: step, files, time so far, time left, what follows (as the terminal says). */
  line: string;
}

export interface Settings {
  models: Record<Slot, ModelRef | null>;
  providers: string[];
  keys: Partial<Record<string, KeyStatus>>;
  offline: OfflineInfo;
  resolved: Record<Slot, ResolvedModel | null>;
  problems: string[];
  /** Who keeps the API keys: 'desktop' (Electron main, through window.lhDesktop) or 'server' (/api/keys). */
  keysOwner?: 'desktop' | 'server';
}

export interface SettingsUpdate {
  models: Record<Slot, ModelRef | null>;
}

/** The model a session is stamped with (its own pick, changeable per session). */
export interface ChatModel {
  provider: string;
  model: string;
  baseUrl?: string | null;
}

export interface ChatSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  model: ChatModel | null;
  messageCount: number;
  /** A turn is running in this session right now. */
  running?: boolean;
}
