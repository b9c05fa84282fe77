// Typed client for the Learning Harness backend (same origin, JSON, camelCase).
// The chat stream itself (POST /api/chat) goes through the AI SDK's
// DefaultChatTransport, see components/ChatView.tsx.

import type { UIMessage } from 'ai';
import { ApiError } from './core/errors';
import { normalizeMessages } from './core/messages';
import type { ChatModel, ChatSummary, KeyProvider, Settings, SettingsUpdate } from './core/types';

export type { ChatSummary, KeyProvider, Settings, SettingsUpdate } from './core/types';

export interface ChatRecord {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  model: ChatModel | null;
  messages: UIMessage[];
}

async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
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

export function getHealth(): Promise<{ status: string }> {
  return json('/api/health');
}

export function getSettings(): Promise<Settings> {
  return json('/api/settings');
}

export function putSettings(update: SettingsUpdate): Promise<Settings> {
  return json('/api/settings', { method: 'PUT', body: JSON.stringify(update) });
}

export async function putKey(provider: KeyProvider, key: string): Promise<void> {
  await request(`/api/keys/${encodeURIComponent(provider)}`, { method: 'PUT', body: JSON.stringify({ key }) });
}

export async function deleteKey(provider: KeyProvider): Promise<void> {
  await request(`/api/keys/${encodeURIComponent(provider)}`, { method: 'DELETE' });
}

export async function listChats(): Promise<ChatSummary[]> {
  const data = await json<{ chats?: ChatSummary[] }>('/api/chats');
  return Array.isArray(data.chats) ? data.chats : [];
}

export function createChat(title?: string): Promise<ChatRecord> {
  return json<ChatRecord>('/api/chats', {
    method: 'POST',
    body: JSON.stringify(title ? { title } : {}),
  });
}

export async function getChat(id: string): Promise<ChatRecord> {
  const record = await json<ChatRecord>(`/api/chats/${encodeURIComponent(id)}`);
  return { ...record, messages: normalizeMessages(record.messages) };
}
