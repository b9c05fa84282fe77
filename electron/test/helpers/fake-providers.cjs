'use strict';
/**
 * Loopback fakes (node:http on 127.0.0.1:0) of the subscription providers' endpoints, recorded
 * from their documented shapes: OpenAI's Codex device login (deviceauth/usercode, deviceauth/token,
 * oauth/token), GitHub's device flow and the Copilot token exchange, and an RFC 8628 server for
 * xAI. Plus a fake of the server's /api/shell/subscription-auth receiver. Nothing reaches the
 * internet. Every request is recorded (method, path, headers, parsed body).
 */

const http = require('node:http');

function b64url(value) {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** An unsigned JWT-shaped token (the app only reads its claims). */
function fakeJwt(claims) {
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.sig`;
}

function readBody(req) {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      const type = req.headers['content-type'] || '';
      let body = null;
      try {
        if (type.includes('application/json')) body = JSON.parse(text);
        else if (type.includes('application/x-www-form-urlencoded')) body = Object.fromEntries(new URLSearchParams(text));
        else body = text || null;
      } catch {
        body = text;
      }
      resolve(body);
    });
  });
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ server, base: `http://127.0.0.1:${port}` });
    });
  });
}

function send(res, status, body) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/**
 * Start the provider fakes.
 *
 * @param {{nowS: () => number}} clock the test's clock (token expiries follow it)
 * Script knobs on the returned object (change them between steps):
 *   polls[provider]   list of 'pending' | 'slow_down' | 'expired' | 'denied' | 'granted' (last repeats)
 *   refresh[provider] 'ok' | 'revoked' | 'down' (HTTP 503)
 *   lifetimeS         access token lifetime in seconds (default 3600)
 *   copilot           'ok' | 'no-subscription'
 */
async function startFakeProviders(clock) {
  const fake = {
    requests: [],
    polls: { chatgpt: ['granted'], 'github-copilot-subscription': ['granted'], 'xai-subscription': ['granted'] },
    pollIndex: { chatgpt: 0, 'github-copilot-subscription': 0, 'xai-subscription': 0 },
    refresh: { chatgpt: 'ok', 'github-copilot-subscription': 'ok', 'xai-subscription': 'ok' },
    copilot: 'ok',
    lifetimeS: 3600,
    /** The polling interval (s) the fakes announce. */
    interval: 5,
    issued: 0,
    /** Delay (ms) before answering a refresh: lets tests overlap two callers. */
    refreshDelayMs: 0,
    count(method, path) {
      return this.requests.filter((r) => r.method === method && r.path === path).length;
    },
  };

  const nextPoll = (provider) => {
    const script = fake.polls[provider];
    const step = script[Math.min(fake.pollIndex[provider], script.length - 1)];
    fake.pollIndex[provider] += 1;
    return step;
  };
  const accessToken = (prefix, extra = {}) => {
    fake.issued += 1;
    return fakeJwt({ sub: `${prefix}-${fake.issued}`, exp: clock.nowS() + fake.lifetimeS, ...extra });
  };
  const delay = (ms) => new Promise((r) => setTimeout(r, ms));

  const { server, base } = await listen(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const body = await readBody(req);
    fake.requests.push({ method: req.method, path: url.pathname, headers: req.headers, body });
    const route = `${req.method} ${url.pathname}`;
    const rfcPoll = (provider, grant) => {
      const step = nextPoll(provider);
      if (step === 'granted') return grant();
      const error = { pending: 'authorization_pending', slow_down: 'slow_down', expired: 'expired_token', denied: 'access_denied' }[step];
      return error;
    };

    switch (route) {
      // --- ChatGPT (Codex device login) ---
      case 'POST /api/accounts/deviceauth/usercode':
        if (!body || !body.client_id) return send(res, 400, { error: 'invalid_request' });
        return send(res, 200, { device_auth_id: 'dev-auth-1', user_code: 'CHAT-1234', interval: String(fake.interval) });
      case 'POST /api/accounts/deviceauth/token': {
        if (!body || body.device_auth_id !== 'dev-auth-1' || body.user_code !== 'CHAT-1234') return send(res, 400, { error: 'bad' });
        const step = nextPoll('chatgpt');
        if (step === 'granted') return send(res, 200, { authorization_code: 'auth-code-1', code_challenge: 'chal', code_verifier: 'verifier-1' });
        if (step === 'denied') return send(res, 400, { error: 'access_denied' });
        if (step === 'expired') return send(res, 400, { error: 'expired_token' });
        return send(res, 403, { error: { code: 'deviceauth_authorization_pending' } });
      }
      case 'POST /oauth/token': {
        const idToken = fakeJwt({ email: 'learner@example.com', 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-42', chatgpt_plan_type: 'plus' } });
        if (body && body.grant_type === 'authorization_code') {
          if (body.code !== 'auth-code-1' || body.code_verifier !== 'verifier-1' || !String(body.redirect_uri).endsWith('/deviceauth/callback')) {
            return send(res, 400, { error: 'invalid_grant' });
          }
          return send(res, 200, { id_token: idToken, access_token: accessToken('chatgpt-access'), refresh_token: `chatgpt-refresh-${fake.issued}` });
        }
        if (body && body.grant_type === 'refresh_token') {
          if (fake.refreshDelayMs) await delay(fake.refreshDelayMs);
          if (fake.refresh.chatgpt === 'revoked') return send(res, 401, { error: { code: 'refresh_token_reused', message: 'secret-body-text' } });
          if (fake.refresh.chatgpt === 'down') return send(res, 503, { error: 'unavailable' });
          return send(res, 200, { id_token: idToken, access_token: accessToken('chatgpt-access'), refresh_token: `chatgpt-refresh-${fake.issued}` });
        }
        return send(res, 400, { error: 'unsupported_grant_type' });
      }
      // --- GitHub device flow + Copilot exchange ---
      case 'POST /login/device/code':
        if (!body || !body.client_id || body.scope !== 'read:user') return send(res, 400, { error: 'invalid_request' });
        return send(res, 200, { device_code: 'gh-device-1', user_code: 'GHUB-5678', verification_uri: `${fake.base}/login/device`, expires_in: 900, interval: fake.interval });
      case 'POST /login/oauth/access_token': {
        if (!body || body.device_code !== 'gh-device-1' || body.grant_type !== 'urn:ietf:params:oauth:grant-type:device_code') return send(res, 200, { error: 'incorrect_device_code' });
        const out = rfcPoll('github-copilot-subscription', () => ({ access_token: 'gho_github_token_1', token_type: 'bearer', scope: 'read:user' }));
        if (typeof out === 'string') return send(res, 200, out === 'slow_down' ? { error: out, interval: 10 } : { error: out });
        return send(res, 200, out);
      }
      case 'GET /copilot_internal/v2/token': {
        if (fake.refreshDelayMs && fake.count('GET', '/copilot_internal/v2/token') > 1) await delay(fake.refreshDelayMs);
        if (req.headers.authorization !== 'token gho_github_token_1') return send(res, 401, { message: 'Bad credentials' });
        if (fake.refresh['github-copilot-subscription'] === 'revoked') return send(res, 401, { message: 'Bad credentials' });
        if (fake.copilot === 'no-subscription') return send(res, 403, { message: 'no copilot' });
        fake.issued += 1;
        return send(res, 200, { token: `tid=copilot-${fake.issued};exp=x`, expires_at: clock.nowS() + Math.min(fake.lifetimeS, 1800), refresh_in: 1500, endpoints: { api: `${fake.base}/copilot` } });
      }
      case 'GET /user':
        if (req.headers.authorization !== 'token gho_github_token_1') return send(res, 401, {});
        return send(res, 200, { login: 'octo-learner' });
      // --- xAI (RFC 8628) ---
      case 'POST /oauth2/device/code':
        if (!body || !body.client_id) return send(res, 400, { error: 'invalid_client' });
        return send(res, 200, { device_code: 'xai-device-1', user_code: 'GROK-9012', verification_uri: `${fake.base}/device`, verification_uri_complete: `${fake.base}/device?user_code=GROK-9012`, expires_in: 600, interval: fake.interval });
      case 'POST /oauth2/token': {
        if (body && body.grant_type === 'urn:ietf:params:oauth:grant-type:device_code') {
          const out = rfcPoll('xai-subscription', () => ({ access_token: accessToken('xai-access'), refresh_token: `xai-refresh-${fake.issued}`, token_type: 'Bearer', expires_in: fake.lifetimeS, id_token: fakeJwt({ email: 'grok@example.com' }) }));
          if (typeof out === 'string') return send(res, 400, { error: out });
          return send(res, 200, out);
        }
        if (body && body.grant_type === 'refresh_token') {
          if (fake.refreshDelayMs) await delay(fake.refreshDelayMs);
          if (fake.refresh['xai-subscription'] === 'revoked') return send(res, 400, { error: 'invalid_grant', error_description: 'secret-body-text' });
          if (fake.refresh['xai-subscription'] === 'down') return send(res, 503, {});
          return send(res, 200, { access_token: accessToken('xai-access'), refresh_token: `xai-refresh-${fake.issued}`, token_type: 'Bearer', expires_in: fake.lifetimeS });
        }
        return send(res, 400, { error: 'unsupported_grant_type' });
      }
      default:
        return send(res, 404, { error: 'not found' });
    }
  });
  fake.base = base;
  fake.server = server;
  fake.env = {
    LH_CHATGPT_AUTH_BASE: base,
    LH_CHATGPT_API_BASE: `${base}/codex`,
    LH_GITHUB_BASE: base,
    LH_GITHUB_API_BASE: base,
    LH_XAI_AUTH_BASE: base,
    LH_XAI_API_BASE: `${base}/xai/v1`,
  };
  fake.close = () => new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  return fake;
}

/** A fake of the server's scoped-auth receiver: records PUT/DELETE; answers `status` (default 204). */
async function startAuthReceiver() {
  const receiver = { requests: [], status: 204 };
  const { server, base } = await listen(async (req, res) => {
    const body = await readBody(req);
    receiver.requests.push({ method: req.method, path: req.url, headers: req.headers, body });
    res.writeHead(receiver.status);
    res.end();
  });
  receiver.base = base;
  receiver.port = server.address().port;
  receiver.close = () => new Promise((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  return receiver;
}

module.exports = { startFakeProviders, startAuthReceiver, fakeJwt };
