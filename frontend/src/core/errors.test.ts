import { describe, expect, it } from 'vitest';
import { ApiError, NETWORK_DETAIL, describeError, extractJsonObject, parseErrorText } from './errors';

describe('parseErrorText', () => {
  it('reads code and detail from a JSON error body', () => {
    const body = '{"error":"models_not_configured","detail":"Set LH_OPENROUTER_API_KEY or add a key in Settings."}';
    expect(parseErrorText(body)).toEqual({
      code: 'models_not_configured',
      detail: 'Set LH_OPENROUTER_API_KEY or add a key in Settings.',
    });
  });

  it('finds JSON embedded in a longer message', () => {
    const msg = 'Error: 503 {"error":"model_unreachable","detail":"OpenRouter did not answer."} (retry later)';
    expect(parseErrorText(msg)).toEqual({ code: 'model_unreachable', detail: 'OpenRouter did not answer.' });
  });

  it('shows the plain-words detail of a turn refused for a named model failure (issue 10)', () => {
    for (const code of ['rate_limited', 'auth_refused', 'model_not_found', 'quota_exhausted']) {
      const detail = `the model failed before replying: the provider says ${code}; try again in 30 s`;
      expect(parseErrorText(JSON.stringify({ error: code, detail }))).toEqual({ code, detail });
    }
  });

  it('falls back to a sentence for a known code without detail', () => {
    const parsed = parseErrorText('{"error":"turn_running"}');
    expect(parsed.code).toBe('turn_running');
    expect(parsed.detail).toMatch(/already being written/);
  });

  it('uses the bare code when unknown and without detail', () => {
    expect(parseErrorText('{"error":"weird_code"}')).toEqual({ code: 'weird_code', detail: 'weird_code' });
  });

  it('understands FastAPI validation errors', () => {
    const body = JSON.stringify({ detail: [{ loc: ['body', 'key'], msg: 'Field required', type: 'missing' }] });
    expect(parseErrorText(body)).toEqual({ code: null, detail: 'key: Field required' });
  });

  it('understands FastAPI string detail', () => {
    expect(parseErrorText('{"detail":"Not Found"}')).toEqual({ code: null, detail: 'Not Found' });
  });

  it('returns raw text when there is no JSON', () => {
    expect(parseErrorText('Internal Server Error')).toEqual({ code: null, detail: 'Internal Server Error' });
    expect(parseErrorText('the model said {oops')).toEqual({ code: null, detail: 'the model said {oops' });
  });

  it('returns raw text when the JSON is not an error object', () => {
    expect(parseErrorText('[1,2,3]')).toEqual({ code: null, detail: '[1,2,3]' });
  });

  it('gives a status sentence for an empty body', () => {
    expect(parseErrorText('', 502).detail).toBe('The server answered with an error (HTTP 502).');
    expect(parseErrorText(undefined).detail).toBe('Something went wrong.');
  });

  it('recognises browser network failures', () => {
    expect(parseErrorText('Failed to fetch')).toEqual({ code: 'network', detail: NETWORK_DETAIL });
    expect(parseErrorText('NetworkError when attempting to fetch resource.').code).toBe('network');
  });
});

describe('extractJsonObject', () => {
  it('returns null for non-objects and garbage', () => {
    expect(extractJsonObject('')).toBeNull();
    expect(extractJsonObject('"str"')).toBeNull();
    expect(extractJsonObject('{not json}')).toBeNull();
  });
});

describe('describeError / ApiError', () => {
  it('carries status, code and detail', () => {
    const err = new ApiError(404, '{"error":"chat_not_found","detail":"No lesson with id abc."}');
    expect(err.status).toBe(404);
    expect(err.code).toBe('chat_not_found');
    expect(err.message).toBe('No lesson with id abc.');
    expect(describeError(err)).toEqual({ code: 'chat_not_found', detail: 'No lesson with id abc.' });
  });

  it('parses an Error thrown by the chat transport', () => {
    const err = new Error('{"error":"turn_running","detail":"Wait for the current reply."}');
    expect(describeError(err)).toEqual({ code: 'turn_running', detail: 'Wait for the current reply.' });
  });

  it('handles strings and unknowns', () => {
    expect(describeError('boom').detail).toBe('boom');
    expect(describeError(42).detail).toBe('Something went wrong.');
  });
});
