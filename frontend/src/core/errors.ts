// Turning server / network failures into one human sentence.
//
// Every backend error body is JSON {"error": "<code>", "detail": "<what to do>"}.
// useChat's DefaultChatTransport throws `new Error(await response.text())` on a
// non-2xx answer, so the JSON ends up (verbatim) in `error.message`; a mid-stream
// {"type":"error","errorText":...} chunk ends up there as plain text.

export interface ParsedError {
  /** Machine-readable code such as "turn_running", or null if unknown. */
  code: string | null;
  /** Sentence to show to the user. */
  detail: string;
}

const FALLBACK_BY_CODE: Record<string, string> = {
  turn_running: 'A reply is already being written for this lesson. Wait for it to finish, then try again.',
  models_not_configured: 'No model is configured. Open Settings to choose a model or add an API key.',
  model_unreachable: 'The model could not be reached. Check your API key and network in Settings, then try again.',
  chat_not_found: 'This lesson does not exist (any more).',
};

const NETWORK_MESSAGES = ['failed to fetch', 'networkerror', 'load failed', 'network request failed'];

export const NETWORK_DETAIL = 'Cannot reach the Learning Harness server. Is it still running?';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** FastAPI validation errors put a list of {msg, loc} objects in `detail`. */
function detailToString(detail: unknown): string | null {
  if (typeof detail === 'string') return detail.trim() || null;
  if (Array.isArray(detail)) {
    const parts = detail
      .map((item) => {
        if (typeof item === 'string') return item;
        if (isRecord(item) && typeof item.msg === 'string') {
          const loc = Array.isArray(item.loc) ? item.loc.filter((p) => p !== 'body').join('.') : '';
          return loc ? `${loc}: ${item.msg}` : item.msg;
        }
        return null;
      })
      .filter((p): p is string => !!p);
    return parts.length ? parts.join('; ') : null;
  }
  return null;
}

function tryParseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/** Find a JSON object in `text`: the whole text, or the outermost {...} inside it. */
export function extractJsonObject(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const whole = tryParseObject(trimmed);
  if (whole) return whole;
  const start = trimmed.indexOf('{');
  const end = trimmed.lastIndexOf('}');
  if (start === -1 || end <= start) return null;
  return tryParseObject(trimmed.slice(start, end + 1));
}

/**
 * Parse an error text (a response body, or an Error's message) into a code and
 * a sentence for the user. `status` (HTTP status, if known) is used for the
 * fallback sentence when the body is empty.
 */
export function parseErrorText(text: string | null | undefined, status?: number): ParsedError {
  const raw = (text ?? '').trim();
  if (!raw) {
    return {
      code: null,
      detail: status ? `The server answered with an error (HTTP ${status}).` : 'Something went wrong.',
    };
  }
  if (NETWORK_MESSAGES.some((m) => raw.toLowerCase().includes(m)) && raw.length < 120) {
    return { code: 'network', detail: NETWORK_DETAIL };
  }
  const obj = extractJsonObject(raw);
  if (obj) {
    const code = typeof obj.error === 'string' ? obj.error : null;
    const detail =
      detailToString(obj.detail) ??
      (typeof obj.message === 'string' ? obj.message : null) ??
      (typeof obj.errorText === 'string' ? obj.errorText : null) ??
      (code ? (FALLBACK_BY_CODE[code] ?? code) : null);
    if (detail) return { code, detail };
  }
  return { code: null, detail: raw };
}

/** Same as parseErrorText, for anything caught (Error, string, unknown). */
export function describeError(err: unknown): ParsedError {
  if (err instanceof ApiError) return { code: err.code, detail: err.detail };
  if (err instanceof Error) return parseErrorText(err.message);
  if (typeof err === 'string') return parseErrorText(err);
  return parseErrorText(null);
}

/** Thrown by src/api.ts for non-2xx answers. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly detail: string;

  constructor(status: number, body: string) {
    const parsed = parseErrorText(body, status);
    super(parsed.detail);
    this.name = 'ApiError';
    this.status = status;
    this.code = parsed.code;
    this.detail = parsed.detail;
  }
}
