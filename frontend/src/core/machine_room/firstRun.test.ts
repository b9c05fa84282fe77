import { describe, expect, it } from 'vitest';
import {
  askedWords,
  initialPicks,
  keyTestBody,
  localSlots,
  needsTeacher,
  normalizeKeyTest,
  normalizeLocalServers,
  withStrong,
  type LocalServer,
} from './firstRun';

const server: LocalServer = { key: 'ollama', name: 'Ollama', port: 11434, baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.1:8b', 'llava:7b'] };

describe('needsTeacher', () => {
  it('is true with no model or only the offline demo, false with a real one or before settings load', () => {
    expect(needsTeacher(null)).toBe(false);
    expect(needsTeacher({ resolved: { strong: null, cheap: null, vision: null } })).toBe(true);
    expect(needsTeacher({ resolved: { strong: { provider: 'local', model: 'smol', offline: true }, cheap: null, vision: null } })).toBe(true);
    expect(needsTeacher({ resolved: { strong: { provider: 'openai', model: 'gpt-4o-mini', offline: false }, cheap: null, vision: null } })).toBe(false);
  });
});

describe('keyTestBody', () => {
  it('says what to fix before a call', () => {
    expect(keyTestBody('openai', '  ', 'gpt-4o-mini', '')).toBe('Paste your API key first.');
    expect(keyTestBody('openai', 'sk-a b', 'gpt-4o-mini', '')).toMatch(/spaces/);
    expect(keyTestBody('openai', 'sk-abc', ' ', '')).toMatch(/gpt-4o-mini/);
    expect(keyTestBody('openai-compatible', 'sk-abc', 'm', 'localhost:1234')).toMatch(/http:\/\//);
    expect(keyTestBody('openrouter', 'sk-abc', 'claude', '')).toMatch(/anthropic\/claude-sonnet-4/);
  });
  it('trims and sends the base URL only for an OpenAI-compatible server', () => {
    expect(keyTestBody('openai', ' sk-abc\n', ' gpt-4o ', 'http://x')).toEqual({ key: 'sk-abc', slot: { provider: 'openai', model: 'gpt-4o' } });
    expect(keyTestBody('openai-compatible', 'sk-abc', 'm', ' http://h:1/v1 ')).toEqual({
      key: 'sk-abc',
      slot: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://h:1/v1' },
    });
  });
});

describe('answers', () => {
  it('reads a key test, with words even when the server gave none', () => {
    expect(normalizeKeyTest({ works: true, detail: 'Works: m answered.' })).toEqual({ works: true, detail: 'Works: m answered.' });
    expect(normalizeKeyTest({})).toEqual({ works: false, detail: 'The test call did not work.' });
  });
  it('reads the local servers, dropping entries of another shape', () => {
    const read = normalizeLocalServers({
      servers: [server, { key: 'x' }, { ...server, key: 'jan', name: 'Jan', models: ['a', 3, ''] }],
      asked: [{ key: 'ollama', name: 'Ollama', port: 11434 }, { key: 'bad' }],
    });
    expect(read.servers.map((s) => [s.key, s.models])).toEqual([
      ['ollama', ['llama3.1:8b', 'llava:7b']],
      ['jan', ['a']],
    ]);
    expect(read.asked).toEqual([{ key: 'ollama', name: 'Ollama', port: 11434 }]);
    expect(normalizeLocalServers(null)).toEqual({ servers: [], asked: [] });
  });
  it('names what was asked', () => {
    expect(askedWords([])).toBe('');
    expect(askedWords([{ key: 'ollama', name: 'Ollama', port: 1 }])).toBe('Ollama (port 1)');
    expect(
      askedWords([
        { key: 'ollama', name: 'Ollama', port: 1 },
        { key: 'lmstudio', name: 'LM Studio', port: 2 },
        { key: 'jan', name: 'Jan', port: 3 },
      ]),
    ).toBe('Ollama (port 1), LM Studio (port 2) and Jan (port 3)');
  });
});

describe('slots', () => {
  it('a server: its first model teaches, cheap follows it, vision unset; each pick becomes its slot', () => {
    const picks = initialPicks(server);
    expect(localSlots(server, picks)).toEqual({
      strong: { provider: 'openai-compatible', model: 'llama3.1:8b', baseUrl: server.baseUrl },
      cheap: null,
      vision: null,
    });
    expect(localSlots(server, { strong: 'llama3.1:8b', cheap: 'llama3.1:8b', vision: 'llava:7b' })?.vision).toEqual({
      provider: 'openai-compatible',
      model: 'llava:7b',
      baseUrl: server.baseUrl,
    });
    expect(localSlots({ ...server, models: [] }, initialPicks({ ...server, models: [] }))).toBeNull();
  });
  it('a key or subscription: strong replaced, the others kept', () => {
    const cheap = { provider: 'openai', model: 'gpt-4o-mini' };
    expect(withStrong({ strong: null, cheap, vision: null }, { provider: 'chatgpt', model: 'gpt-5-codex' })).toEqual({
      strong: { provider: 'chatgpt', model: 'gpt-5-codex' },
      cheap,
      vision: null,
    });
    expect(withStrong(null, cheap)).toEqual({ strong: cheap, cheap: null, vision: null });
  });
});
