// The Workbench in the browser (issue 14): background jobs the teacher starts with the
// `research`, `demo` and `visual` tools, and the artifacts they deliver. Mirrors
// server/core/contracts/jobs.py. Pure: reading steer messages and artifact parts defensively,
// job records, the words of a dispatch card, the demo's page URL (a sandboxed frame), the visual's data URL,
// and the research summary's citations.

import { formatCost, formatCount, formatTokens } from '../usage';

/** The UI part of a steer message (and of a live delivery into a running turn). */
export const ARTIFACT_PART = 'data-subagent-artifact';
/** A bookkeeping part of the server's queued learner messages: never shown. */
export const ENQUEUED_PART = 'data-enqueued-messages';

export const JOB_KINDS = ['research', 'demo', 'visual'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JOB_STATUSES = ['running', 'done', 'error', 'aborted'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What a steer says happened to its job. */
export type SteerStatus = 'done' | 'error' | 'aborted';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];
}

export function isJobKind(value: unknown): value is JobKind {
  return typeof value === 'string' && (JOB_KINDS as readonly string[]).includes(value);
}

export function isJobTool(name: string | null): name is JobKind {
  return isJobKind(name);
}

// ---------------------------------------------------------------------------
// Artifacts

export interface Source {
  title: string;
  url: string;
}

export interface ResearchArtifact {
  kind: 'research';
  question: string;
  summary: string;
  sources: Source[];
}

export interface DemoArtifact {
  kind: 'demo';
  title: string;
  html: string;
  checks: string[];
}

export interface VisualArtifact {
  kind: 'visual';
  title: string;
  svg: string;
  lookedAt: boolean;
  checks: string[];
}

export type Artifact = ResearchArtifact | DemoArtifact | VisualArtifact;

/** The data of a `data-subagent-artifact` part. */
export interface ArtifactData {
  /** The part's id (the steer id), '' when absent. */
  id: string;
  jobId: string;
  kind: JobKind;
  status: SteerStatus;
  toolCallId: string | null;
  /** null: the job failed or was stopped (or the artifact could not be read). */
  artifact: Artifact | null;
  error: string | null;
}

/** Read an artifact; null for anything that is not a whole one. */
export function normalizeArtifact(raw: unknown): Artifact | null {
  if (!isRecord(raw)) return null;
  if (raw.kind === 'research') {
    const summary = str(raw.summary);
    if (!summary) return null;
    const sources: Source[] = [];
    if (Array.isArray(raw.sources)) {
      for (const s of raw.sources) {
        if (!isRecord(s)) continue;
        const url = str(s.url);
        if (!url) continue;
        sources.push({ title: str(s.title)?.trim() || url, url });
      }
    }
    return { kind: 'research', question: str(raw.question) ?? '', summary, sources };
  }
  if (raw.kind === 'demo') {
    const html = str(raw.html);
    if (!html) return null;
    return { kind: 'demo', title: str(raw.title) ?? 'Demo', html, checks: strings(raw.checks) };
  }
  if (raw.kind === 'visual') {
    const svg = str(raw.svg);
    if (!svg) return null;
    return { kind: 'visual', title: str(raw.title) ?? 'Picture', svg, lookedAt: raw.lookedAt === true, checks: strings(raw.checks) };
  }
  return null;
}

/** Read a `data-subagent-artifact` part; null when it is not one (or has no job id). */
export function readArtifactPart(part: unknown): ArtifactData | null {
  if (!isRecord(part) || part.type !== ARTIFACT_PART || !isRecord(part.data)) return null;
  const data = part.data;
  const jobId = str(data.jobId);
  if (!jobId) return null;
  const artifact = normalizeArtifact(data.artifact);
  const kind = isJobKind(data.kind) ? data.kind : (artifact?.kind ?? 'research');
  let status: SteerStatus = data.status === 'aborted' ? 'aborted' : data.status === 'done' ? 'done' : 'error';
  // "done" without a readable artifact is nothing to show: say it failed rather than draw nothing.
  if (status === 'done' && !artifact) status = 'error';
  const error = str(data.error)?.trim() || null;
  return { id: str(part.id) ?? '', jobId, kind, status, toolCallId: str(data.toolCallId), artifact: status === 'done' ? artifact : null, error };
}

/** The minimal message shape read here (UIMessage and plain JSON both fit). */
export interface MessageLike {
  id?: string;
  role: string;
  parts: readonly unknown[];
}

/** Whether a message is a steer: a user-role message carrying an artifact part (is_steer on the server). */
export function isSteerMessage(message: MessageLike): boolean {
  return message.role === 'user' && message.parts.some((p) => isRecord(p) && p.type === ARTIFACT_PART);
}

/** The artifact parts of a message, in order. */
export function artifactParts(message: MessageLike): ArtifactData[] {
  return message.parts.map(readArtifactPart).filter((a): a is ArtifactData => a !== null);
}

/** The DOM id of an artifact card (one per job; ids are `job_[A-Za-z0-9_-]+`). */
export function artifactAnchor(jobId: string): string {
  return `artifact-${jobId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export interface ArtifactPlace {
  data: ArtifactData;
  /** The message that shows it (the first one carrying it). */
  messageId: string;
  anchor: string;
}

export interface ArtifactIndex {
  /** By the job's dispatch tool call id. */
  byToolCall: Map<string, ArtifactPlace>;
  /** By job id. */
  byJob: Map<string, ArtifactPlace>;
}

/**
 * Where each job's artifact is in the transcript: the first message carrying it (a result
 * streamed into a running turn and the same result saved as a steer are shown once).
 * Within one job, a result outranks an abort notice.
 */
export function artifactIndex(messages: readonly MessageLike[]): ArtifactIndex {
  const byJob = new Map<string, ArtifactPlace>();
  const byToolCall = new Map<string, ArtifactPlace>();
  messages.forEach((message, i) => {
    for (const data of artifactParts(message)) {
      const current = byJob.get(data.jobId);
      if (current && !(current.data.status !== 'done' && data.status === 'done')) continue;
      const place = { data, messageId: message.id ?? `msg-${i}`, anchor: artifactAnchor(data.jobId) };
      byJob.set(data.jobId, place);
      if (data.toolCallId) byToolCall.set(data.toolCallId, place);
    }
  });
  return { byJob, byToolCall };
}

/** Whether this message is where the artifact is shown (true when the index does not know it). */
export function showsArtifactHere(index: ArtifactIndex, data: ArtifactData, messageId: string): boolean {
  const place = index.byJob.get(data.jobId);
  return !place || (place.messageId === messageId && place.data.id === data.id);
}

// ---------------------------------------------------------------------------
// Job records (GET /api/chats/{chatId}/jobs)

export interface JobUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  requests: number;
  costUsd: number | null;
  /** The model id the job's role ran (issue 30 item 2); absent in older records. */
  model?: string;
  /** The picture checker's model, when a visual was looked at. */
  visionModel?: string;
}

export interface JobDelivery {
  kind: 'result' | 'abort';
  status: 'pending' | 'delivered';
  steerId: string;
  deliveredAt: string | null;
}

export interface JobRecord {
  id: string;
  chatId: string;
  toolCallId: string;
  kind: JobKind;
  input: Record<string, unknown>;
  status: JobStatus;
  createdAt: string;
  finishedAt: string | null;
  error: string | null;
  usage: JobUsage;
  delivery: JobDelivery | null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function normalizeJob(raw: unknown): JobRecord | null {
  if (!isRecord(raw)) return null;
  const id = str(raw.id);
  if (!id || !isJobKind(raw.kind)) return null;
  const status = (JOB_STATUSES as readonly unknown[]).includes(raw.status) ? (raw.status as JobStatus) : null;
  if (!status) return null;
  const usage = isRecord(raw.usage) ? raw.usage : {};
  const d = isRecord(raw.delivery) ? raw.delivery : null;
  return {
    id,
    chatId: str(raw.chatId) ?? '',
    toolCallId: str(raw.toolCallId) ?? '',
    kind: raw.kind,
    input: isRecord(raw.input) ? raw.input : {},
    status,
    createdAt: str(raw.createdAt) ?? '',
    finishedAt: str(raw.finishedAt),
    error: str(raw.error)?.trim() || null,
    usage: {
      inputTokens: numberOrNull(usage.inputTokens),
      outputTokens: numberOrNull(usage.outputTokens),
      requests: numberOrNull(usage.requests) ?? 0,
      costUsd: numberOrNull(usage.costUsd),
      ...(str(usage.model) ? { model: str(usage.model)!.trim() } : {}),
      ...(str(usage.visionModel) ? { visionModel: str(usage.visionModel)!.trim() } : {}),
    },
    delivery:
      d && (d.kind === 'result' || d.kind === 'abort')
        ? {
            kind: d.kind,
            status: d.status === 'delivered' ? 'delivered' : 'pending',
            steerId: str(d.steerId) ?? '',
            deliveredAt: str(d.deliveredAt),
          }
        : null,
  };
}

/** The `jobs` of a GET /api/chats/{chatId}/jobs answer (junk dropped). */
export function normalizeJobs(raw: unknown): JobRecord[] {
  const list = isRecord(raw) && Array.isArray(raw.jobs) ? raw.jobs : [];
  return list.map(normalizeJob).filter((j): j is JobRecord => j !== null);
}

// ---------------------------------------------------------------------------
// Dispatch cards: the teacher's research/demo/visual tool calls

/** "Researching: …", "Building a demo: …", "Drawing: …" for a job tool's input. */
export function dispatchTitle(kind: JobKind, input: unknown): string {
  const field = kind === 'research' ? 'question' : 'request';
  const text = isRecord(input) ? (str(input[field])?.trim() ?? '') : '';
  const lead = kind === 'research' ? 'Researching' : kind === 'demo' ? 'Building a demo' : 'Drawing';
  return text ? `${lead}: ${text}` : `${lead}…`;
}

export type DispatchState = 'starting' | 'working' | 'finished' | 'failed' | 'stopped';

export interface DispatchStatus {
  state: DispatchState;
  /** Shown on the card: "working…", "finished", "failed", "stopped" (never "delivered"). */
  text: string;
  /** Why it failed, when known. */
  detail: string | null;
}

const DISPATCH_WORDS: Record<DispatchState, string> = {
  starting: 'starting…',
  working: 'working…',
  finished: 'finished',
  failed: 'failed',
  stopped: 'stopped',
};

function status(state: DispatchState, detail: string | null = null): DispatchStatus {
  return { state, text: DISPATCH_WORDS[state], detail };
}

/** The job id a dispatch tool's output names (`{jobId, status: "working", note}`). */
export function dispatchJobId(output: unknown): string | null {
  return isRecord(output) ? str(output.jobId) : null;
}

/**
 * A dispatch card's status: the job record says (running → working…, done → finished, error →
 * failed, aborted → stopped); without one, the delivered artifact, then the tool call itself.
 * Whether the result was delivered to the teacher is bookkeeping and never shown.
 */
export function dispatchStatus(
  part: { state: string; output?: unknown; errorText?: string },
  job: Pick<JobRecord, 'status' | 'error'> | null | undefined,
  artifact?: Pick<ArtifactData, 'status' | 'error'> | null,
): DispatchStatus {
  if (part.state === 'output-error') return status('failed', part.errorText?.trim() || null);
  if (job) {
    if (job.status === 'running') return status('working');
    if (job.status === 'done') return status('finished');
    if (job.status === 'aborted') return status('stopped');
    return status('failed', job.error);
  }
  if (artifact) {
    if (artifact.status === 'done') return status('finished');
    if (artifact.status === 'aborted') return status('stopped');
    return status('failed', artifact.error);
  }
  if (part.state === 'output-available' && dispatchJobId(part.output)) return status('working');
  return status('starting');
}

// ---------------------------------------------------------------------------
// Demo: the HTML runs in a sandboxed iframe (allow-scripts only, never allow-same-origin), loaded
// from the server with a policy of its own (sandboxed, inline scripts and styles only, nothing
// loaded from anywhere). Not a srcdoc: a srcdoc frame inherits the app's CSP (`script-src 'self'`),
// under which the demo's inline scripts would not run (decision 0020).

export const DEMO_SANDBOX = 'allow-scripts';

/** The page of a finished demo (`GET /api/jobs/{jobId}/demo`). */
export function demoUrl(jobId: string): string {
  return `/api/jobs/${encodeURIComponent(jobId)}/demo`;
}

// ---------------------------------------------------------------------------
// Visual: the SVG only ever as an <img> (an image never runs its scripts)

/** `data:image/svg+xml;base64,…` of the SVG's UTF-8 bytes. */
export function svgDataUrl(svg: string): string {
  const bytes = new TextEncoder().encode(svg);
  let binary = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return `data:image/svg+xml;base64,${btoa(binary)}`;
}

// ---------------------------------------------------------------------------
// Research: [n] citations link to the numbered sources

/** The DOM id of source n (1-based) of a job's research card. */
export function sourceAnchor(jobId: string, n: number): string {
  return `${artifactAnchor(jobId)}-src-${n}`;
}

/** A web link to open in a new tab, or null (only http and https are links). */
export function safeUrl(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The host of a source's URL for its line ("en.wikipedia.org"), or "". */
export function sourceHost(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
}

// [1], [2, 3], [1][2]: not a link already ("[1](…)") nor a reference definition ("[1]: …").
const CITATION_RE = /\[(\d{1,2}(?:\s*,\s*\d{1,2})*)\](?![(:])/g;

/**
 * The summary as Markdown whose citations are in-page links to the sources list: `[2]` becomes
 * `[&#91;2&#93;](#<anchor of source 2>)` (entities, not `\[`: that would be read as display math),
 * `[1, 3]` two such links. Numbers outside 1..count stay text.
 */
export function linkCitations(summary: string, count: number, jobId: string): string {
  return summary.replace(CITATION_RE, (whole: string, list: string) => {
    const numbers = list.split(',').map((n) => Number(n.trim()));
    if (numbers.some((n) => !Number.isInteger(n) || n < 1 || n > count)) return whole;
    return numbers.map((n) => `[&#91;${n}&#93;](#${sourceAnchor(jobId, n)})`).join('');
  });
}

/**
 * An ended job's usage in words, with the model that ran (issue 30 item 2): "10 in / 20 out
 * tokens · cost unknown · 1 model call · on gpt-x (picture checked by gpt-v)". "" while the job
 * runs (usage is counted when it ends) and for a job that made no model call.
 */
export function jobUsageLine(job: Pick<JobRecord, 'status' | 'usage'> | null | undefined): string {
  if (!job || job.status === 'running') return '';
  const { usage } = job;
  if (usage.requests === 0 && usage.inputTokens === null && usage.outputTokens === null) return '';
  const calls = `${formatCount(usage.requests)} model call${usage.requests === 1 ? '' : 's'}`;
  const on = usage.model ? ` · on ${usage.model}` : '';
  const eyes = usage.visionModel ? ` (picture checked by ${usage.visionModel})` : '';
  return `${formatTokens(usage)} tokens · ${formatCost(usage.costUsd)} · ${calls}${on}${eyes}`;
}
