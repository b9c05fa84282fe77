'use strict';
/**
 * Security and wiring decisions of the desktop shell, as pure functions (no electron import),
 * so that they are unit-tested under plain Node (electron/test/policy.test.cjs).
 *
 * main.cjs only wires these into Electron's hooks.
 */

const path = require('node:path');

/**
 * Providers whose API key the desktop app stores, and the env var the server reads for each
 * (server/config.py SECRET_KEY_ENV): the model providers, the researcher's web search providers
 * and the dictation service. In the desktop app main is their only owner (decision 0018).
 */
const MODEL_KEY_ENV = Object.freeze({
  openrouter: 'LH_OPENROUTER_API_KEY',
  openai: 'LH_OPENAI_API_KEY',
  'openai-compatible': 'LH_OPENAI_COMPATIBLE_API_KEY',
});
const SEARCH_KEY_ENV = Object.freeze({
  tavily: 'LH_TAVILY_API_KEY',
  brave: 'LH_BRAVE_API_KEY',
  google: 'LH_GOOGLE_SEARCH_API_KEY',
});
const DICTATION_KEY_ENV = Object.freeze({ deepgram: 'LH_DEEPGRAM_API_KEY' });
const API_KEY_ENV = Object.freeze({ ...MODEL_KEY_ENV, ...SEARCH_KEY_ENV, ...DICTATION_KEY_ENV });
const PROVIDERS = Object.freeze(Object.keys(API_KEY_ENV));

const TOKEN_HEADER = 'x-lh-token';
const SERVER_NAME = 'learning-harness-server';
const MAX_KEY_LENGTH = 4096;

/** The app's exact origin for a server port: `http://127.0.0.1:<port>` (no trailing slash). */
function originFor(port) {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new TypeError(`not a TCP port: ${port}`);
  }
  return `http://127.0.0.1:${port}`;
}

function parseUrl(url) {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * Whether `url` belongs to the app's origin. Parsed, not prefix-matched, so userinfo tricks
 * (`http://127.0.0.1:1234@evil.example/`) and look-alike ports (`:12345` vs `:1234`) fail.
 */
function isSameOrigin(url, origin) {
  const parsed = parseUrl(url);
  return parsed !== null && typeof origin === 'string' && parsed.origin === origin;
}

/**
 * Whether the per-launch token header may be added to a request: only when its URL starts with
 * the exact origin followed by `/` (the server's API and pages), never for any other host or port.
 */
function shouldInjectToken(url, origin) {
  return (
    typeof url === 'string' &&
    typeof origin === 'string' &&
    url.startsWith(`${origin}/`) &&
    isSameOrigin(url, origin)
  );
}

/** Request headers with the token added when the predicate holds; the input is never mutated. */
function headersWithToken(url, requestHeaders, origin, token) {
  const headers = { ...(requestHeaders || {}) };
  // Never forward a token a page may have set itself, whatever its spelling.
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === TOKEN_HEADER) delete headers[name];
  }
  if (token && shouldInjectToken(url, origin)) headers[TOKEN_HEADER] = token;
  return headers;
}

function isWebUrl(url) {
  const parsed = parseUrl(url);
  return parsed !== null && (parsed.protocol === 'http:' || parsed.protocol === 'https:');
}

/**
 * What to do when the page navigates (will-navigate / will-redirect):
 * `allow` inside the app's origin, `external` (open in the user's browser) for other http(s)
 * URLs, `deny` for everything else (file:, javascript:, data:, custom schemes).
 */
function navigationDecision(url, origin) {
  if (isSameOrigin(url, origin)) return 'allow';
  if (isWebUrl(url)) return 'external';
  return 'deny';
}

/** What to do with window.open / target=_blank: same decisions as navigation. */
function windowOpenDecision(url, origin) {
  return navigationDecision(url, origin);
}

function originOfUrl(url) {
  const parsed = parseUrl(url);
  return parsed === null ? null : parsed.origin;
}

/**
 * Permission requests (setPermissionRequestHandler): deny by default; allow only `media` for
 * audio capture (the microphone) requested by the app's own origin. Camera (`video`) and mixed
 * audio+video requests are denied.
 *
 * @param {string} permission Electron's permission name.
 * @param {{requestingUrl?: string, mediaTypes?: string[]}} details Electron's details.
 * @param {string|null} origin The app's origin (null before the server is up).
 */
function permissionRequestDecision(permission, details, origin) {
  if (!origin || permission !== 'media') return false;
  const requesting = originOfUrl(details && details.requestingUrl);
  if (requesting !== origin) return false;
  const types = (details && details.mediaTypes) || [];
  return types.length > 0 && types.every((type) => type === 'audio');
}

/**
 * Permission checks (setPermissionCheckHandler): same rule, with Electron's check-handler
 * arguments (`requestingOrigin`, `details.mediaType` of 'audio' | 'video' | 'unknown').
 */
function permissionCheckDecision(permission, requestingOrigin, details, origin) {
  if (!origin || permission !== 'media') return false;
  const requesting =
    originOfUrl(requestingOrigin) || originOfUrl(details && (details.securityOrigin || details.requestingUrl));
  if (requesting !== origin) return false;
  return Boolean(details) && details.mediaType === 'audio';
}

/** The provider name if it is one the app stores keys for, else throws a TypeError. */
function validateProvider(provider) {
  if (typeof provider !== 'string' || !Object.prototype.hasOwnProperty.call(API_KEY_ENV, provider)) {
    throw new TypeError(`unknown provider ${JSON.stringify(provider)}; expected one of ${PROVIDERS.join(', ')}`);
  }
  return provider;
}

/** A trimmed API key, or throws: non-empty, at most 4096 characters, no control characters. */
function validateApiKey(key) {
  if (typeof key !== 'string') throw new TypeError('the API key must be a string');
  const trimmed = key.trim();
  if (!trimmed) throw new TypeError('the API key is empty');
  if (trimmed.length > MAX_KEY_LENGTH) throw new TypeError('the API key is too long');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new TypeError('the API key contains control characters');
  return trimmed;
}

/**
 * How to start the server.
 *
 * Packaged: the frozen onedir bundle copied by electron-builder to `<resources>/server/`.
 * Development: `python -m server` from the repo, with `LH_PYTHON` or the repo's `.venv`.
 * Credentials never appear here: they travel in the environment (see serverEnv).
 *
 * @returns {{command: string, args: string[], cwd: string}}
 */
function resolveServerCommand({ packaged, resourcesPath, repoRoot, platform, env = {}, port = 0 }) {
  const portArgs = ['--host', '127.0.0.1', '--port', String(port)];
  const win = platform === 'win32';
  const p = win ? path.win32 : path.posix;
  if (packaged) {
    const dir = p.join(resourcesPath, 'server');
    return { command: p.join(dir, SERVER_NAME + (win ? '.exe' : '')), args: portArgs, cwd: dir };
  }
  const python =
    env.LH_PYTHON || (win ? p.join(repoRoot, '.venv', 'Scripts', 'python.exe') : p.join(repoRoot, '.venv', 'bin', 'python'));
  return { command: python, args: ['-m', 'server', ...portArgs], cwd: repoRoot };
}

/**
 * The server's environment: the app's own, plus the data dir, the per-launch token and the keys
 * stored in the app (which win over keys inherited from the environment).
 */
function serverEnv(baseEnv, { dataDir, token, keys = {}, shellSecret = null }) {
  const env = { ...baseEnv };
  delete env.LH_API_TOKEN;
  delete env.LH_SHELL_SECRET;
  delete env.ELECTRON_RUN_AS_NODE;
  env.LH_DATA_DIR = dataDir;
  env.LH_API_TOKEN = token;
  // The per-launch secret main sends with the scoped subscription auth (never argv, never the page).
  if (shellSecret) env.LH_SHELL_SECRET = shellSecret;
  env.PYTHONUNBUFFERED = '1';
  env.LH_EXIT_ON_STDIN_EOF = '1'; // the server stops when this shell's end of its stdin closes
  env.PYTHONIOENCODING = 'utf-8';
  for (const [provider, key] of Object.entries(keys)) {
    validateProvider(provider);
    if (key) env[API_KEY_ENV[provider]] = key;
  }
  return env;
}

/**
 * Key status for the UI: whether each provider has a key, and where it comes from. Never the key.
 *
 * @param {string[]} storedProviders Providers with a key in the app's store.
 * @param {object} baseEnv The shell's own environment (keys set there also reach the server).
 * @param {'os'|'unavailable'} storage Whether the OS key store can encrypt.
 * @param {string|null} [problem] What is wrong with the key file, in plain words (null: nothing).
 * @returns {{providers: Object<string, {set: boolean, source: 'app'|'env'|null, env: string}>,
 *   storage: string, problem: string|null}}
 */
function keyStatus(storedProviders, baseEnv, storage, problem = null) {
  const providers = {};
  for (const provider of PROVIDERS) {
    const stored = storedProviders.includes(provider);
    const inEnv = Boolean(baseEnv[API_KEY_ENV[provider]]);
    providers[provider] = {
      set: stored || inEnv,
      source: stored ? 'app' : inEnv ? 'env' : null,
      env: API_KEY_ENV[provider],
    };
  }
  return { providers, storage, problem: problem || null };
}

module.exports = {
  API_KEY_ENV,
  MODEL_KEY_ENV,
  SEARCH_KEY_ENV,
  DICTATION_KEY_ENV,
  PROVIDERS,
  TOKEN_HEADER,
  SERVER_NAME,
  originFor,
  isSameOrigin,
  shouldInjectToken,
  headersWithToken,
  navigationDecision,
  windowOpenDecision,
  permissionRequestDecision,
  permissionCheckDecision,
  validateProvider,
  validateApiKey,
  resolveServerCommand,
  serverEnv,
  keyStatus,
};
