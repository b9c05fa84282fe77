'use strict';
/**
 * The three subscription providers as plain data + request functions (contract: issue 19
 * item 2, seed §8.1). Each provider exposes:
 *
 *   config(env)                       endpoints and client id (env overrides for loopback fakes)
 *   start(cfg, ctx)                   -> {userCode, verificationUri, expiresAt (epoch s), interval (s), handle}
 *   pollOnce(cfg, handle, ctx)        -> a device-flow outcome (device-flow.cjs)
 *   complete(cfg, grant, ctx)         -> credential
 *   refresh(cfg, credential, ctx)     -> credential (rejects with SubscriptionRevoked when the
 *                                        provider no longer honours the saved login)
 *
 * A credential is {accessToken, expiresAt (epoch s), refreshToken|null, githubToken|null,
 * accountId|null, baseUrl|null, account|null}. Only accessToken/expiresAt/accountId/baseUrl ever
 * leave Electron main (the scoped push); the rest stays in the encrypted credential file.
 * ctx = {fetch, nowS(), signal?} (the signal aborts a login's polls when it is cancelled).
 */

const { request, requestOk, ProviderHttpError } = require('./http.cjs');

class SubscriptionRevoked extends Error {
  constructor(label) {
    super(`Your ${label} login was revoked or has expired; connect again.`);
    this.name = 'SubscriptionRevoked';
  }
}

class SubscriptionRefused extends Error {
  constructor(message) {
    super(message);
    this.name = 'SubscriptionRefused';
  }
}

function trimBase(url) {
  return String(url).replace(/\/+$/, '');
}

/** The claims of a JWT (payload only, unverified: used for expiry and account id), or {}. */
function jwtClaims(token) {
  if (typeof token !== 'string') return {};
  const parts = token.split('.');
  if (parts.length < 2 || !parts[1]) return {};
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return claims && typeof claims === 'object' ? claims : {};
  } catch {
    return {};
  }
}

function str(value) {
  return typeof value === 'string' && value ? value : null;
}

/** Expiry in epoch seconds: the JWT's exp, else now + expires_in, else now + fallback. */
function expiryOf(accessToken, expiresIn, nowS, fallbackS = 3600) {
  const exp = jwtClaims(accessToken).exp;
  if (typeof exp === 'number' && Number.isFinite(exp)) return exp;
  const n = Number(expiresIn);
  if (Number.isFinite(n) && n > 0) return nowS + n;
  return nowS + fallbackS;
}

/** RFC 8628 §3.5 error codes -> device-flow outcome kinds. */
function outcomeForError(label, code, body) {
  switch (code) {
    case 'authorization_pending':
      return { kind: 'pending' };
    case 'slow_down':
      return { kind: 'slow_down', interval: body && body.interval };
    case 'expired_token':
      return { kind: 'expired' };
    case 'access_denied':
      return { kind: 'denied' };
    default:
      return { kind: 'failed', message: `The ${label} login failed (${String(code).slice(0, 40)}). Connect again.` };
  }
}

function errorCode(body) {
  if (!body) return null;
  if (typeof body.error === 'string') return body.error;
  if (body.error && typeof body.error === 'object' && typeof body.error.code === 'string') return body.error.code;
  return null;
}

function requireString(label, what, value) {
  if (typeof value !== 'string' || !value) {
    throw new ProviderHttpError(`The ${label} ${what} answer is missing a field the app needs`);
  }
  return value;
}

/**
 * The credential from an OAuth token answer {access_token, expires_in?, refresh_token?, id_token?}
 * (a renewal may leave out the refresh and id tokens: the previous login's are kept). `fromClaims`
 * reads {accountId, account} from the id_token's claims; a missing one keeps the previous value.
 */
function oauthCredential(label, tokens, previous, nowS, cfg, fromClaims) {
  const accessToken = requireString(label, 'token', tokens.access_token);
  const idToken = str(tokens.id_token) || (previous && previous.idToken) || null;
  const { accountId, account } = fromClaims(jwtClaims(idToken));
  return {
    accessToken,
    expiresAt: expiryOf(accessToken, tokens.expires_in, nowS),
    refreshToken: str(tokens.refresh_token) || (previous && previous.refreshToken) || null,
    idToken,
    githubToken: null,
    accountId: accountId || (previous && previous.accountId) || null,
    baseUrl: cfg.apiBase,
    account: account || (previous && previous.account) || null,
  };
}

/**
 * start()'s result from an RFC 8628 §3.2 device authorization answer {device_code, user_code,
 * expires_in (s, default 900), interval}; the user opens `verificationUri`.
 */
function deviceCodeStart(label, body, verificationUri, nowS) {
  const lifetime = Number(body.expires_in);
  return {
    userCode: requireString(label, 'device code', body.user_code),
    verificationUri: requireString(label, 'device code', verificationUri),
    expiresAt: nowS + (Number.isFinite(lifetime) && lifetime > 0 ? lifetime : 900),
    interval: body.interval,
    handle: { deviceCode: requireString(label, 'device code', body.device_code) },
  };
}

/** pollOnce()'s outcome for an answer that is not a grant: its RFC 8628 error code, else failed. */
function notGranted(label, service, answer) {
  const code = errorCode(answer.body);
  if (code) return outcomeForError(label, code, answer.body);
  return { kind: 'failed', message: `The ${service} login failed (HTTP ${answer.status}). Connect again.` };
}

// ---------------------------------------------------------------------------------------------
// ChatGPT: the Codex CLI's device code login (openai/codex codex-rs/login/src/device_code_auth.rs):
// POST {issuer}/api/accounts/deviceauth/usercode {client_id} -> {device_auth_id, user_code, interval};
// the user opens {issuer}/codex/device; poll POST {issuer}/api/accounts/deviceauth/token
// {device_auth_id, user_code}: 403/404 = pending, 200 = {authorization_code, code_verifier, ...};
// then the PKCE code exchange POST {issuer}/oauth/token (form, redirect_uri {issuer}/deviceauth/callback).
// Refresh: POST {issuer}/oauth/token {client_id, grant_type: refresh_token, refresh_token, scope} (JSON).
// The account id is the id_token claim https://api.openai.com/auth .chatgpt_account_id.
// ---------------------------------------------------------------------------------------------

const CHATGPT_LABEL = 'ChatGPT';
const CHATGPT_CODE_LIFETIME_S = 15 * 60;

function chatgptCredential(tokens, previous, nowS, cfg) {
  return oauthCredential(CHATGPT_LABEL, tokens, previous, nowS, cfg, (claims) => {
    const auth = claims['https://api.openai.com/auth'] || {};
    const profile = claims['https://api.openai.com/profile'] || {};
    return { accountId: str(auth.chatgpt_account_id), account: str(claims.email) || str(profile.email) };
  });
}

const chatgpt = {
  id: 'chatgpt',
  label: CHATGPT_LABEL,
  config(env) {
    return {
      authBase: trimBase(env.LH_CHATGPT_AUTH_BASE || 'https://auth.openai.com'),
      apiBase: trimBase(env.LH_CHATGPT_API_BASE || 'https://chatgpt.com/backend-api/codex'),
      clientId: env.LH_CHATGPT_CLIENT_ID || 'app_EMoamEEZ73f0CkXaXp7hrann',
    };
  },
  async start(cfg, ctx) {
    const answer = await request('The ChatGPT device code request', `${cfg.authBase}/api/accounts/deviceauth/usercode`, {
      method: 'POST',
      json: { client_id: cfg.clientId },
      fetch: ctx.fetch,
    });
    if (answer.status === 404) {
      throw new SubscriptionRefused('ChatGPT device code login is not enabled for this account or server.');
    }
    if (!answer.ok || !answer.body) {
      throw new ProviderHttpError(`The ChatGPT device code request failed (HTTP ${answer.status})`, answer);
    }
    const body = answer.body;
    const userCode = requireString(CHATGPT_LABEL, 'device code', str(body.user_code) || str(body.usercode));
    return {
      userCode,
      verificationUri: `${cfg.authBase}/codex/device`,
      expiresAt: ctx.nowS() + CHATGPT_CODE_LIFETIME_S,
      interval: body.interval,
      handle: { deviceAuthId: requireString(CHATGPT_LABEL, 'device code', body.device_auth_id), userCode },
    };
  },
  async pollOnce(cfg, handle, ctx) {
    const answer = await request('The ChatGPT login check', `${cfg.authBase}/api/accounts/deviceauth/token`, {
      method: 'POST',
      json: { device_auth_id: handle.deviceAuthId, user_code: handle.userCode },
      fetch: ctx.fetch,
      signal: ctx.signal,
    });
    if (answer.status === 403 || answer.status === 404) return { kind: 'pending' };
    if (answer.ok && answer.body && str(answer.body.authorization_code) && str(answer.body.code_verifier)) {
      return { kind: 'granted', grant: { code: answer.body.authorization_code, verifier: answer.body.code_verifier } };
    }
    return notGranted(CHATGPT_LABEL, 'ChatGPT', answer);
  },
  async complete(cfg, grant, ctx) {
    const tokens = await requestOk('The ChatGPT token exchange', `${cfg.authBase}/oauth/token`, {
      method: 'POST',
      form: {
        grant_type: 'authorization_code',
        code: grant.code,
        redirect_uri: `${cfg.authBase}/deviceauth/callback`,
        client_id: cfg.clientId,
        code_verifier: grant.verifier,
      },
      fetch: ctx.fetch,
    });
    return chatgptCredential(tokens, null, ctx.nowS(), cfg);
  },
  async refresh(cfg, credential, ctx) {
    if (!credential.refreshToken) throw new SubscriptionRevoked(CHATGPT_LABEL);
    const answer = await request('The ChatGPT token renewal', `${cfg.authBase}/oauth/token`, {
      method: 'POST',
      json: { client_id: cfg.clientId, grant_type: 'refresh_token', refresh_token: credential.refreshToken, scope: 'openid profile email' },
      fetch: ctx.fetch,
    });
    if (answer.status === 400 || answer.status === 401) throw new SubscriptionRevoked(CHATGPT_LABEL);
    if (!answer.ok || !answer.body) {
      throw new ProviderHttpError(`The ChatGPT token renewal failed (HTTP ${answer.status})`, answer);
    }
    return chatgptCredential(answer.body, credential, ctx.nowS(), cfg);
  },
};

// ---------------------------------------------------------------------------------------------
// GitHub Copilot: GitHub's device flow with the Copilot editors' client id (scope read:user), then
// the Copilot token exchange GET {api}/copilot_internal/v2/token (Authorization: token <github>)
// -> {token, expires_at, endpoints: {api}}. "Refresh" is a new exchange with the saved GitHub
// token; a 401 there means the GitHub token was revoked.
// ---------------------------------------------------------------------------------------------

const COPILOT_LABEL = 'GitHub Copilot';
const COPILOT_HEADERS = Object.freeze({
  'editor-version': 'vscode/1.96.0',
  'editor-plugin-version': 'copilot-chat/0.26.7',
  'user-agent': 'GitHubCopilotChat/0.26.7',
});

async function copilotExchange(cfg, githubToken, previous, ctx) {
  const answer = await request('The Copilot token request', `${cfg.apiBase}/copilot_internal/v2/token`, {
    headers: { authorization: `token ${githubToken}`, ...COPILOT_HEADERS },
    fetch: ctx.fetch,
  });
  if (answer.status === 401) throw new SubscriptionRevoked(COPILOT_LABEL);
  if (answer.status === 403 || answer.status === 404) {
    throw new SubscriptionRefused('This GitHub account has no active Copilot subscription (or Copilot is turned off for it).');
  }
  if (!answer.ok || !answer.body) {
    throw new ProviderHttpError(`The Copilot token request failed (HTTP ${answer.status})`, answer);
  }
  const body = answer.body;
  const accessToken = requireString(COPILOT_LABEL, 'token', body.token);
  const expiresAt = Number.isFinite(Number(body.expires_at)) && Number(body.expires_at) > 0 ? Number(body.expires_at) : ctx.nowS() + 25 * 60;
  const api = body.endpoints && str(body.endpoints.api);
  let account = previous ? previous.account : null;
  if (!account) {
    const user = await request('The GitHub account lookup', `${cfg.apiBase}/user`, {
      headers: { authorization: `token ${githubToken}`, 'user-agent': COPILOT_HEADERS['user-agent'] },
      fetch: ctx.fetch,
    }).catch(() => null);
    account = user && user.ok && user.body ? str(user.body.login) : null;
  }
  return {
    accessToken,
    expiresAt,
    refreshToken: null,
    idToken: null,
    githubToken,
    accountId: null,
    baseUrl: trimBase(api || cfg.chatBase),
    account,
  };
}

const githubCopilot = {
  id: 'github-copilot-subscription',
  label: COPILOT_LABEL,
  config(env) {
    return {
      base: trimBase(env.LH_GITHUB_BASE || 'https://github.com'),
      apiBase: trimBase(env.LH_GITHUB_API_BASE || 'https://api.github.com'),
      chatBase: trimBase(env.LH_COPILOT_API_BASE || 'https://api.githubcopilot.com'),
      clientId: env.LH_GITHUB_CLIENT_ID || 'Iv1.b507a08c87ecfe98',
    };
  },
  async start(cfg, ctx) {
    const body = await requestOk('The GitHub device code request', `${cfg.base}/login/device/code`, {
      method: 'POST',
      form: { client_id: cfg.clientId, scope: 'read:user' },
      fetch: ctx.fetch,
    });
    return deviceCodeStart(COPILOT_LABEL, body, body.verification_uri, ctx.nowS());
  },
  async pollOnce(cfg, handle, ctx) {
    const answer = await request('The GitHub login check', `${cfg.base}/login/oauth/access_token`, {
      method: 'POST',
      form: { client_id: cfg.clientId, device_code: handle.deviceCode, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' },
      fetch: ctx.fetch,
      signal: ctx.signal,
    });
    if (answer.body && str(answer.body.access_token)) return { kind: 'granted', grant: { githubToken: answer.body.access_token } };
    return notGranted(COPILOT_LABEL, 'GitHub', answer);
  },
  async complete(cfg, grant, ctx) {
    return copilotExchange(cfg, grant.githubToken, null, ctx);
  },
  async refresh(cfg, credential, ctx) {
    if (!credential.githubToken) throw new SubscriptionRevoked(COPILOT_LABEL);
    return copilotExchange(cfg, credential.githubToken, credential, ctx);
  },
};

// ---------------------------------------------------------------------------------------------
// xAI: its subscription OAuth is not publicly documented. This is the standard RFC 8628 device
// authorization grant against LH_XAI_AUTH_BASE: POST /oauth2/device/code, poll POST /oauth2/token
// (grant_type device_code), refresh with grant_type refresh_token. invalid_grant = revoked.
// ---------------------------------------------------------------------------------------------

const XAI_LABEL = 'xAI (Grok)';

function xaiCredential(tokens, previous, nowS, cfg) {
  return oauthCredential(XAI_LABEL, tokens, previous, nowS, cfg, (claims) => ({
    accountId: null,
    account: str(claims.email) || str(claims.preferred_username),
  }));
}

const xai = {
  id: 'xai-subscription',
  label: XAI_LABEL,
  config(env) {
    return {
      authBase: trimBase(env.LH_XAI_AUTH_BASE || 'https://auth.x.ai'),
      apiBase: trimBase(env.LH_XAI_API_BASE || 'https://api.x.ai/v1'),
      clientId: env.LH_XAI_CLIENT_ID || 'learning-harness',
      scope: env.LH_XAI_SCOPE || 'openid offline_access',
    };
  },
  async start(cfg, ctx) {
    const body = await requestOk('The xAI device code request', `${cfg.authBase}/oauth2/device/code`, {
      method: 'POST',
      form: { client_id: cfg.clientId, scope: cfg.scope },
      fetch: ctx.fetch,
    });
    return deviceCodeStart(XAI_LABEL, body, str(body.verification_uri_complete) || body.verification_uri, ctx.nowS());
  },
  async pollOnce(cfg, handle, ctx) {
    const answer = await request('The xAI login check', `${cfg.authBase}/oauth2/token`, {
      method: 'POST',
      form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: handle.deviceCode, client_id: cfg.clientId },
      fetch: ctx.fetch,
      signal: ctx.signal,
    });
    if (answer.ok && answer.body && str(answer.body.access_token)) return { kind: 'granted', grant: { tokens: answer.body } };
    return notGranted(XAI_LABEL, 'xAI', answer);
  },
  async complete(cfg, grant, ctx) {
    return xaiCredential(grant.tokens, null, ctx.nowS(), cfg);
  },
  async refresh(cfg, credential, ctx) {
    if (!credential.refreshToken) throw new SubscriptionRevoked(XAI_LABEL);
    const answer = await request('The xAI token renewal', `${cfg.authBase}/oauth2/token`, {
      method: 'POST',
      form: { grant_type: 'refresh_token', refresh_token: credential.refreshToken, client_id: cfg.clientId },
      fetch: ctx.fetch,
    });
    if (answer.status === 401 || (answer.status === 400 && errorCode(answer.body) === 'invalid_grant')) {
      throw new SubscriptionRevoked(XAI_LABEL);
    }
    if (!answer.ok || !answer.body) {
      throw new ProviderHttpError(`The xAI token renewal failed (HTTP ${answer.status})`, answer);
    }
    return xaiCredential(answer.body, credential, ctx.nowS(), cfg);
  },
};

const PROVIDERS = Object.freeze({ [chatgpt.id]: chatgpt, [githubCopilot.id]: githubCopilot, [xai.id]: xai });
const PROVIDER_IDS = Object.freeze(Object.keys(PROVIDERS));

/** The provider id if known, else a TypeError naming the allowed ids. */
function validateSubscriptionProvider(id) {
  if (typeof id !== 'string' || !Object.prototype.hasOwnProperty.call(PROVIDERS, id)) {
    throw new TypeError(`unknown subscription ${JSON.stringify(id)}; expected one of ${PROVIDER_IDS.join(', ')}`);
  }
  return id;
}

/** The scoped request auth the server may hold: never the refresh token nor the GitHub token. */
function scopedAuth(credential) {
  return {
    accessToken: credential.accessToken,
    expiresAt: credential.expiresAt,
    accountId: credential.accountId || null,
    baseUrl: credential.baseUrl || null,
  };
}

module.exports = {
  PROVIDERS,
  PROVIDER_IDS,
  COPILOT_HEADERS,
  SubscriptionRevoked,
  SubscriptionRefused,
  validateSubscriptionProvider,
  scopedAuth,
  jwtClaims,
};
