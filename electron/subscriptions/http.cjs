'use strict';
/**
 * A small HTTP helper for the provider endpoints (Node's global fetch). It never puts a request
 * or response body, a header value or a token into an error message: errors say which step
 * failed and the HTTP status, in plain words.
 */

const REQUEST_TIMEOUT_MS = 20000;

class ProviderHttpError extends Error {
  /**
   * @param {string} message plain words (no body, no token)
   * @param {{status?: number|null, body?: object|null}} [details] status and the parsed JSON body
   *   (kept for the caller's decisions, e.g. `error: "invalid_grant"`; never logged)
   */
  constructor(message, { status = null, body = null } = {}) {
    super(message);
    this.name = 'ProviderHttpError';
    this.status = status;
    Object.defineProperty(this, 'body', { value: body, enumerable: false });
  }
}

/**
 * Send one request and parse the JSON answer.
 *
 * @param {string} what what this step is, for errors ("ChatGPT device code request")
 * @param {string} url
 * @param {{method?: string, headers?: object, json?: object, form?: object, fetch?: Function,
 *          timeoutMs?: number, signal?: AbortSignal}} [options]
 * @returns {Promise<{status: number, ok: boolean, body: object|null}>} body is null when the
 *   answer is not a JSON object. Network failures reject with ProviderHttpError (status null).
 */
async function request(what, url, { method = 'GET', headers = {}, json, form, fetch: fetchImpl = globalThis.fetch, timeoutMs = REQUEST_TIMEOUT_MS, signal } = {}) {
  const init = { method, headers: { accept: 'application/json', ...headers } };
  if (json !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(json);
  } else if (form !== undefined) {
    init.headers['content-type'] = 'application/x-www-form-urlencoded';
    init.body = new URLSearchParams(form).toString();
  }
  const timeout = AbortSignal.timeout(timeoutMs);
  init.signal = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let response;
  try {
    response = await fetchImpl(url, init);
  } catch (error) {
    if (signal && signal.aborted) throw error;
    const why = timeout.aborted ? 'timed out' : 'could not reach the server';
    throw new ProviderHttpError(`${what} ${why}; check the connection and try again`);
  }
  let body = null;
  try {
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : null;
    body = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  } catch {
    body = null;
  }
  return { status: response.status, ok: response.ok, body };
}

/** Like request(), but a non-2xx status or a non-JSON answer rejects with ProviderHttpError. */
async function requestOk(what, url, options) {
  const answer = await request(what, url, options);
  if (!answer.ok) {
    throw new ProviderHttpError(`${what} failed (HTTP ${answer.status})`, answer);
  }
  if (!answer.body) throw new ProviderHttpError(`${what} gave an answer the app cannot read`, answer);
  return answer.body;
}

module.exports = { ProviderHttpError, request, requestOk, REQUEST_TIMEOUT_MS };
