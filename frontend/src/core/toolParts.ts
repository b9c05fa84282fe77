// The AI SDK's tool parts inside a UIMessage, as every system reads them (the lesson's questions
// and plan, the Workbench's dispatch cards). A leaf: it imports nothing.
//
// A tool part is {type: "tool-<name>", toolCallId, state, input, output?,
// errorText?} inside an assistant UIMessage. States: input-streaming,
// input-available (called, no result yet), output-available, output-error.

/** The minimal message shape the core reads (UIMessage and plain JSON both fit). */
export interface MessageLike {
  id?: string;
  role: string;
  parts: readonly unknown[];
}

export interface ToolPart {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  toolName?: string;
  providerExecuted?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `quiz` for a `tool-quiz` part (or a dynamic-tool part's toolName); null for other parts. */
export function toolNameOf(part: unknown): string | null {
  if (!isRecord(part) || typeof part.type !== 'string') return null;
  if (part.type === 'dynamic-tool') return typeof part.toolName === 'string' ? part.toolName : 'unknown';
  return part.type.startsWith('tool-') ? part.type.slice('tool-'.length) : null;
}

/** The part as a tool part, or null when it is not one. */
export function asToolPart(part: unknown): ToolPart | null {
  if (toolNameOf(part) === null || !isRecord(part)) return null;
  if (typeof part.toolCallId !== 'string' || typeof part.state !== 'string') return null;
  return part as unknown as ToolPart;
}
