// Typed client for the Learning Harness backend (same origin, JSON, camelCase).
// The chat stream itself (POST /api/chat, GET /api/chats/{id}/stream) goes
// through the AI SDK's DefaultChatTransport, see src/turnClient.ts.

import type { UIMessage } from 'ai';
import { normalizeActivity, normalizePending, type ActivityRow, type PendingLesson } from './core/machine_room/activity';
import { ApiError } from './core/errors';
import {
  normalizeGraph,
  normalizeRenderSettings,
  readCompact,
  type CompactGraph,
  type GraphCluster,
  type GraphData,
  type RenderSettings,
} from './core/library/graph';
import { normalizeCoverage, normalizeFlush, type FlushAnswer, type LessonCoverage } from './core/classroom/lessonGraph';
import { normalizeKeyTest, normalizeLocalServers, type KeyTestBody, type KeyTestResult, type LocalServers } from './core/machine_room/firstRun';
import { normalizeLibrarySettings, type LibrarySettings } from './core/machine_room/librarySettings';
import { normalizeGone, normalizeImportFiles, normalizeSources, type GoneNote, type GraphSource, type ImportFileResult, type NameDecision } from './core/library/imports';
import { normalizeMessages } from './core/classroom/messages';
import { normalizeResearchSettings, type ResearchSettings, type ResearchUpdate, type SearchProvider } from './core/machine_room/research';
import { normalizeJobs, type JobRecord } from './core/workbench/workbench';
import {
  normalizeLevels,
  normalizeProblem,
  normalizeSet,
  normalizeSetSummaries,
  type PracticeLevels,
  type PracticeParams,
  type PracticeProblem,
  type ProblemSet,
  type SetSummary,
} from './core/practice/practice';
import type { ChatModel, ChatSummary, KeyProvider, ModelRef, Settings, SettingsUpdate } from './core/types';
import { normalizeTrash, type TrashList } from './core/trash';
import { normalizeUsage, type UsageEntry } from './core/usage';

export type { ChatSummary, KeyProvider, Settings, SettingsUpdate } from './core/types';

export interface ChatRecord {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  model: ChatModel | null;
  messages: UIMessage[];
  usage: UsageEntry[];
  /** A turn is running (only GET /api/chats/{id} says; false otherwise). */
  running: boolean;
  /** The session's last accepted turn failed (memory only, GET /api/chats/{id}); null otherwise. */
  lastFailure?: { detail: string; at: string } | null;
}

async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  // A FormData body sets its own multipart content type (with the boundary).
  if (init.body !== undefined && !(init.body instanceof FormData) && !headers.has('content-type')) headers.set('content-type', 'application/json');
  headers.set('accept', 'application/json');
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) {
    let body = '';
    try {
      body = await res.text();
    } catch {
      // ignore: ApiError falls back to the status
    }
    throw new ApiError(res.status, body);
  }
  return res;
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await request(path, init);
  return (await res.json()) as T;
}

function chatPath(id: string, rest = ''): string {
  return `/api/chats/${encodeURIComponent(id)}${rest}`;
}

/** A record as the UI uses it: messages and usage normalised, `running` a boolean. */
function toRecord(raw: ChatRecord): ChatRecord {
  return {
    ...raw,
    messages: normalizeMessages(raw.messages),
    usage: normalizeUsage(raw.usage),
    running: raw.running === true,
    lastFailure:
      raw.lastFailure && typeof raw.lastFailure.detail === 'string'
        ? { detail: raw.lastFailure.detail, at: String(raw.lastFailure.at ?? '') }
        : null,
  };
}

export function getHealth(): Promise<{ status: string }> {
  return json('/api/health');
}

export function getSettings(): Promise<Settings> {
  return json('/api/settings');
}

export function putSettings(update: SettingsUpdate): Promise<Settings> {
  return json('/api/settings', { method: 'PUT', body: JSON.stringify(update) });
}

/** PUT /api/settings/roles {<role>: {provider, model, baseUrl?} | null}: every role's override
 * (null: its default); answers the new settings (as GET). 400 names an unknown role or bad slot. */
export function putRoles(roles: Record<string, ModelRef | null>): Promise<Settings> {
  return json('/api/settings/roles', { method: 'PUT', body: JSON.stringify(roles) });
}

export async function putKey(provider: KeyProvider | SearchProvider | 'deepgram', key: string): Promise<void> {
  await request(`/api/keys/${encodeURIComponent(provider)}`, { method: 'PUT', body: JSON.stringify({ key }) });
}

export async function deleteKey(provider: KeyProvider | SearchProvider | 'deepgram'): Promise<void> {
  await request(`/api/keys/${encodeURIComponent(provider)}`, { method: 'DELETE' });
}

export async function listChats(): Promise<ChatSummary[]> {
  const data = await json<{ chats?: ChatSummary[] }>('/api/chats');
  return Array.isArray(data.chats) ? data.chats : [];
}

/** POST /api/chats. `demo`: the learner chose the offline demo model on the demo screen (without
 * it, a lesson that would run on that model is refused: 409 demo_not_chosen). */
export async function createChat(title?: string, demo = false): Promise<ChatRecord> {
  return toRecord(
    await json<ChatRecord>('/api/chats', {
      method: 'POST',
      body: JSON.stringify({ ...(title ? { title } : {}), ...(demo ? { demo: true } : {}) }),
    }),
  );
}

export async function getChat(id: string, init?: RequestInit): Promise<ChatRecord> {
  return toRecord(await json<ChatRecord>(chatPath(id), init));
}

/** PATCH /api/chats/{id} {title}. */
export async function renameChat(id: string, title: string): Promise<ChatRecord> {
  return toRecord(await json<ChatRecord>(chatPath(id), { method: 'PATCH', body: JSON.stringify({ title }) }));
}

/** DELETE /api/chats/{id}; 409 while a turn runs. */
export async function deleteChat(id: string): Promise<void> {
  await request(chatPath(id), { method: 'DELETE' });
}

/** PUT /api/chats/{id}/settings {model: {provider, model, baseUrl?}, demo?}; 409 while a turn runs;
 * `demo` confirms a switch to the offline demo model (409 demo_not_chosen without it). */
export async function setChatModel(id: string, model: ModelRef, demo = false): Promise<ChatRecord> {
  const body = demo ? { model, demo: true } : { model };
  return toRecord(await json<ChatRecord>(chatPath(id, '/settings'), { method: 'PUT', body: JSON.stringify(body) }));
}

/** GET /api/chats/{id}/jobs: the lesson's background jobs (research, demo, visual). */
export async function getJobs(id: string, init?: RequestInit): Promise<JobRecord[]> {
  return normalizeJobs(await json<unknown>(chatPath(id, '/jobs'), init));
}

/** GET /api/settings/research: the web search provider (none: no research tool) and which keys are stored. */
export async function getResearchSettings(): Promise<ResearchSettings> {
  return normalizeResearchSettings(await json<unknown>('/api/settings/research'));
}

/** PUT /api/settings/research {provider, googleCx, baseUrl}; answers the settings as they now are. */
export async function putResearchSettings(update: ResearchUpdate): Promise<ResearchSettings> {
  return normalizeResearchSettings(await json<unknown>('/api/settings/research', { method: 'PUT', body: JSON.stringify(update) }));
}

/** POST /api/chats/{id}/abort: the only way to stop a running turn on the server. */
export function abortTurn(id: string): Promise<{ aborted: boolean }> {
  return json(chatPath(id, '/abort'), { method: 'POST' });
}

// ---------------------------------------------------------------------------
// Library: notes import, activity feed, graph sources

export interface ImportAnswer {
  files: ImportFileResult[];
  /** The server refused every file (HTTP 400 `refused`); its sentence. */
  refusedAll: string | null;
  /** The import these files joined (send it with the next page of the same pick). */
  importId: string | null;
}

function importIdOf(raw: unknown): string | null {
  return typeof raw === 'object' && raw !== null && 'importId' in raw && typeof raw.importId === 'string' ? raw.importId : null;
}

/**
 * POST /api/graph/import as multipart `files` (each named by `name`: the file's
 * name, or its path inside a picked folder). 202 and the 400 "every file was
 * refused" both carry the per-file list; other failures throw ApiError.
 */
/**
 * POST /api/graph/import with up to 200 files (one page of a pick). `importId`: the answer's id
 * from an earlier page of the same pick, so every page counts in one summary row.
 */
export async function importNotes(
  files: readonly { file: Blob; name: string }[],
  importId: string | null = null,
  decisions: readonly NameDecision[] = [],
): Promise<ImportAnswer> {
  const form = new FormData();
  if (importId) form.append('importId', importId);
  if (decisions.length) form.append('decisions', JSON.stringify(decisions));
  for (const { file, name } of files) form.append('files', file, name);
  const res = await fetch('/api/graph/import', { method: 'POST', body: form, headers: { accept: 'application/json' } });
  const text = await res.text();
  if (res.ok) return { files: normalizeImportFiles(safeJson(text)), refusedAll: null, importId: importIdOf(safeJson(text)) };
  const err = new ApiError(res.status, text);
  if (res.status === 400 && err.code === 'refused') {
    const listed = normalizeImportFiles(safeJson(text));
    if (listed.length) return { files: listed, refusedAll: err.detail, importId: importIdOf(safeJson(text)) };
  }
  throw err;
}

/** POST /api/graph/import/gone: the notes a folder picked again holds no more (changes nothing). */
export async function goneNotes(folders: readonly string[], present: readonly string[]): Promise<GoneNote[]> {
  const raw = await json<unknown>('/api/graph/import/gone', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ folders, present }),
  });
  return normalizeGone(raw);
}

/** POST /api/graph/import/remove: take out what the listed notes said (the learner confirmed). */
export async function removeNotes(sources: readonly string[], importId: string | null): Promise<{ files: ImportFileResult[]; importId: string | null }> {
  const raw = await json<unknown>('/api/graph/import/remove', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(importId ? { sources, importId } : { sources }),
  });
  return { files: normalizeImportFiles(raw), importId: importIdOf(raw) };
}

/** What a lesson taught that is in the graph (GET /api/graph/lessons/{id}): for its delete dialog (issue 29). */
export interface LessonKnowledge {
  /** Propositions the lesson is a source of (0: it never was read into the graph). */
  propositions: number;
  /** Its reading into the graph runs now (a removal would be refused until it ends). */
  reading: boolean;
}

export async function lessonKnowledge(id: string): Promise<LessonKnowledge> {
  const raw = await json<{ propositions?: unknown; reading?: unknown }>(`/api/graph/lessons/${encodeURIComponent(id)}`);
  return { propositions: typeof raw.propositions === 'number' ? raw.propositions : 0, reading: raw.reading === true };
}

/** POST /api/graph/lessons/{id}/remove: take what a (deleted) lesson taught out of the graph; its status and plain-words detail. */
export async function removeLessonKnowledge(id: string): Promise<{ status: string; detail: string }> {
  const raw = await json<{ status?: unknown; detail?: unknown }>(`/api/graph/lessons/${encodeURIComponent(id)}/remove`, {
    method: 'POST',
    body: JSON.stringify({ confirmed: true }),
  });
  return { status: String(raw.status ?? ''), detail: String(raw.detail ?? '') };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** GET /api/activity: background jobs (newest first) and lessons waiting to be read into the graph. */
export async function getActivity(init?: RequestInit): Promise<{ rows: ActivityRow[]; pending: PendingLesson[] }> {
  const raw = await json<unknown>('/api/activity', init);
  return { rows: normalizeActivity(raw), pending: normalizePending(raw) };
}

/** GET /api/chats/{id}/coverage: how much of the lesson's teaching is in the graph, and what runs. */
export async function getLessonCoverage(id: string, init?: RequestInit): Promise<LessonCoverage> {
  const coverage = normalizeCoverage(await json<unknown>(chatPath(id, '/coverage'), init));
  if (!coverage) throw new ApiError(500, 'the coverage answer could not be read');
  return coverage;
}

/**
 * POST /api/chats/{id}/graph: read the lesson's new teaching into the graph now (`explicit`, the
 * menu's "Add to my graph now"), or because the learner left it (`leave`, sent with keepalive so
 * it survives the page going away).
 */
export async function flushLesson(id: string, trigger: 'explicit' | 'leave' = 'explicit'): Promise<FlushAnswer> {
  const init: RequestInit = { method: 'POST', body: JSON.stringify({ trigger }), keepalive: trigger === 'leave' };
  return normalizeFlush(await json<unknown>(chatPath(id, '/graph'), init));
}

/** GET /api/library/settings. */
export async function getLibrarySettings(): Promise<LibrarySettings> {
  return normalizeLibrarySettings(await json<unknown>('/api/library/settings'));
}

/** PUT /api/library/settings with the keys that change; answers the settings as they now apply. */
export async function putLibrarySettings(update: Partial<LibrarySettings>): Promise<LibrarySettings> {
  return normalizeLibrarySettings(await json<unknown>('/api/library/settings', { method: 'PUT', body: JSON.stringify(update) }));
}

/** POST /api/activity/abort {source}: stops the source's run (every part of it). */
export async function abortActivity(source: string): Promise<boolean> {
  const data = await json<{ aborted?: unknown }>('/api/activity/abort', { method: 'POST', body: JSON.stringify({ source }) });
  return data.aborted === true;
}

/** GET /api/graph/sources: lessons and notes files that gave the graph propositions. */
export async function getGraphSources(): Promise<GraphSource[]> {
  return normalizeSources(await json<unknown>('/api/graph/sources'));
}

// ---------------------------------------------------------------------------
// The knowledge graph (home page)

/** GET /api/graph: propositions, implication nodes, links and birth-session clusters. */
export async function getGraph(init?: RequestInit): Promise<GraphData> {
  return normalizeGraph(await json<unknown>('/api/graph', init));
}

/**
 * GET /api/graph?format=compact[&since=<version>]: the view in its compact form, or with `held`
 * (the view at some version) only what changed since, applied to it (issue 17 item 5). A delta
 * that does not follow `held`, or an answer that is not compact, costs one more read: the whole
 * compact view, else the full JSON view (an older server).
 */
export async function getGraphSince(held: CompactGraph | null, init?: RequestInit): Promise<CompactGraph | { version: null; data: GraphData }> {
  const query = held ? `format=compact&since=${encodeURIComponent(held.version)}` : 'format=compact';
  const read = readCompact(await json<unknown>(`/api/graph?${query}`, init), held);
  if (read) return read;
  const whole = held ? readCompact(await json<unknown>('/api/graph?format=compact', init), null) : null;
  return whole ?? { version: null, data: await getGraph(init) };
}

/** PUT /api/graph/positions {id: {x, y}}: dragged positions (sanitized by the server). */
export async function putGraphPositions(positions: Record<string, { x: number; y: number }>): Promise<number> {
  const data = await json<{ saved?: unknown }>('/api/graph/positions', { method: 'PUT', body: JSON.stringify(positions) });
  return typeof data.saved === 'number' ? data.saved : 0;
}

/** GET /api/graph/settings: the render settings, defaults filled in. */
export async function getRenderSettings(): Promise<RenderSettings> {
  const data = await json<{ settings?: unknown }>('/api/graph/settings');
  return normalizeRenderSettings(data.settings);
}

/** PUT /api/graph/settings with only the keys that change; answers the merged settings. */
export async function putRenderSettings(update: Partial<RenderSettings>): Promise<RenderSettings> {
  const data = await json<{ settings?: unknown }>('/api/graph/settings', { method: 'PUT', body: JSON.stringify(update) });
  return normalizeRenderSettings(data.settings);
}

/**
 * POST /api/graph/delete {ids}: full death (a proposition takes every chain that uses it; an
 * implication id takes exactly its chain). 409 `extraction_running`, 404 when nothing matches.
 */
export async function deleteGraphNodes(ids: readonly string[]): Promise<{ deletedNodes: string[]; deletedChains: string[] }> {
  const data = await json<{ deletedNodes?: unknown; deletedChains?: unknown }>('/api/graph/delete', {
    method: 'POST',
    body: JSON.stringify({ ids }),
  });
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
  return { deletedNodes: strings(data.deletedNodes), deletedChains: strings(data.deletedChains) };
}

/** POST /api/graph/export/{vault.zip|deck.apkg} {ids}: the chain table's selection as an Obsidian
 * vault or an Anki deck (issue 31 item 2), as a Blob to save. 404 when an id left the graph. */
export async function exportGraphSelection(path: string, ids: readonly string[]): Promise<Blob> {
  return (await request(path, { method: 'POST', body: JSON.stringify({ ids }) })).blob();
}

/** GET /api/graph/clusters: every birth-session group (a lesson or a notes file) with its node ids. */
export async function getGraphClusters(init?: RequestInit): Promise<GraphCluster[]> {
  const data = await json<{ clusters?: unknown }>('/api/graph/clusters', init);
  return normalizeGraph({ nodes: [], links: [], clusters: data.clusters }).clusters;
}

// ---------------------------------------------------------------------------
// Practice (seed §7): problem sets from the graph, one attempt per problem

function setPath(id: string, rest = ''): string {
  return `/api/practice/sets/${encodeURIComponent(id)}${rest}`;
}

/** GET /api/practice/levels: the three axes' named levels with their definitions, and the defaults. */
export async function getPracticeLevels(init?: RequestInit): Promise<PracticeLevels> {
  return normalizeLevels(await json<unknown>('/api/practice/levels', init));
}

/** GET /api/practice/sets: every set, newest first, with its status and counts. */
export async function listPracticeSets(init?: RequestInit): Promise<SetSummary[]> {
  return normalizeSetSummaries(await json<unknown>('/api/practice/sets', init));
}

export interface CreateSetBody {
  nodeIds: string[];
  params: PracticeParams;
  title?: string;
  note?: string;
}

/** POST /api/practice/sets: 202 {id}, generation runs on; 400 empty selection or bad params, 503 no model. */
export async function createPracticeSet(body: CreateSetBody): Promise<string> {
  const data = await json<{ id?: unknown }>('/api/practice/sets', { method: 'POST', body: JSON.stringify(body) });
  if (typeof data.id !== 'string' || !data.id) throw new ApiError(500, 'the new set came back without an id');
  return data.id;
}

/** GET /api/practice/sets/{id}: the whole set; a problem's solution and rubric only once answered. 404 unknown. */
export async function getPracticeSet(id: string, init?: RequestInit): Promise<ProblemSet> {
  const set = normalizeSet(await json<unknown>(setPath(id), init));
  if (!set) throw new ApiError(500, 'the problem set could not be read');
  return set;
}

/** DELETE /api/practice/sets/{id}: stops its runs, then deletes it. */
export async function deletePracticeSet(id: string): Promise<void> {
  await request(setPath(id), { method: 'DELETE' });
}

/**
 * POST /api/practice/sets/{id}/answers {problemId, answer}: the one attempt. 202 with the problem,
 * solution and rubric revealed, the grade to come; 409 not ready, 400 already answered or empty.
 */
export async function answerProblem(setId: string, problemId: string, answer: string): Promise<PracticeProblem> {
  const data = await json<{ problem?: unknown }>(setPath(setId, '/answers'), { method: 'POST', body: JSON.stringify({ problemId, answer }) });
  const problem = normalizeProblem(data.problem);
  if (!problem) throw new ApiError(500, 'the answered problem could not be read');
  return problem;
}

/** GET /api/first-run/local-servers: the model servers answering on this computer's usual ports
 * (issue 29 item 2). */
export async function getLocalServers(): Promise<LocalServers> {
  return normalizeLocalServers(await json<unknown>('/api/first-run/local-servers'));
}

/** POST /api/first-run/key-test: one test call with a pasted key; nothing is stored. */
export async function testKey(body: KeyTestBody): Promise<KeyTestResult> {
  return normalizeKeyTest(await json<unknown>('/api/first-run/key-test', { method: 'POST', body: JSON.stringify(body) }));
}

/** GET /api/trash: deleted lessons and problem sets kept 30 days (issue 31 item 6), newest first. */
export async function getTrash(): Promise<TrashList> {
  return normalizeTrash(await json<unknown>('/api/trash'));
}

/** POST /api/trash/restore {id}: the lesson (whole: plan, jobs) or set comes back. 404 gone, 409 exists again. */
export async function restoreFromTrash(id: string): Promise<void> {
  await request('/api/trash/restore', { method: 'POST', body: JSON.stringify({ id }) });
}

/** DELETE /api/trash: everything in it removed for good; how many. */
export async function emptyTrash(): Promise<number> {
  const data = await json<{ removed?: unknown }>('/api/trash', { method: 'DELETE' });
  return typeof data.removed === 'number' ? data.removed : 0;
}
