import { describe, expect, it } from 'vitest';
import { formatRowUsage, normalizeActivityRow } from './activity';
import { NOT_SET, OFFLINE_MODEL_ID, modelIdOf } from './settings';
import { defaultLabel, parseModelRoles, rolesDraft, rolesDraftsEqual, rolesUpdate, runsLabel, validateRoles } from './roleModels';

const SETTINGS = {
  modelRoles: [
    { role: 'teacher', label: 'Teacher', does: 'Teaches.', default: 'lesson', optional: false, override: null, runs: null, problem: null },
    {
      role: 'grader',
      label: 'Grader',
      does: 'Scores your practice answers.',
      default: 'strong',
      optional: false,
      override: { provider: 'openai', model: 'gpt-grade', baseUrl: null },
      runs: { provider: 'openai', model: 'gpt-grade', offline: false },
      problem: null,
    },
    { role: 'visualCheck', label: 'Picture checker', does: 'Looks.', default: 'vision', optional: true, override: null, runs: null, problem: null },
    { role: 'naming', label: 'Lesson names', does: 'Names.', default: 'cheap', optional: false, override: null, runs: null, problem: 'Cheap model: no key' },
    { role: 'broken', default: 'strong' }, // no label: dropped
    'junk',
  ],
};

describe('per-role models', () => {
  it('reads the roles the server lists, dropping malformed rows', () => {
    const roles = parseModelRoles(SETTINGS);
    expect(roles.map((r) => r.role)).toEqual(['teacher', 'grader', 'visualCheck', 'naming']);
    expect(roles[1].override).toEqual({ provider: 'openai', model: 'gpt-grade', baseUrl: null });
    expect(parseModelRoles({})).toEqual([]);
    expect(parseModelRoles(null)).toEqual([]);
  });

  it('says each default and what runs in plain words', () => {
    const [teacher, grader, check, naming] = parseModelRoles(SETTINGS);
    expect(defaultLabel(teacher)).toBe("Default: each lesson's own model");
    expect(defaultLabel(grader)).toBe('Default: the Strong model');
    expect(runsLabel(teacher)).toContain("each lesson's own model");
    expect(runsLabel(grader)).toBe('Runs gpt-grade via openai');
    expect(runsLabel(check)).toMatch(/^Optional, not set/);
    expect(runsLabel(naming)).toBe('Cheap model: no key');
  });

  it('round-trips a draft into the PUT body, null for a default', () => {
    const roles = parseModelRoles(SETTINGS);
    const draft = rolesDraft(roles);
    expect(draft.teacher.provider).toBe(NOT_SET);
    expect(rolesUpdate(draft)).toEqual({
      teacher: null,
      grader: { provider: 'openai', model: 'gpt-grade' },
      visualCheck: null,
      naming: null,
    });
    const changed = { ...draft, naming: { provider: 'openai-compatible', model: ' llama3 ', baseUrl: 'http://127.0.0.1:11434/v1' } };
    expect(rolesDraftsEqual(draft, changed)).toBe(false);
    expect(rolesUpdate(changed).naming).toEqual({ provider: 'openai-compatible', model: 'llama3', baseUrl: 'http://127.0.0.1:11434/v1' });
  });

  it('names the role of each problem before saving', () => {
    const roles = parseModelRoles(SETTINGS);
    const draft = { ...rolesDraft(roles), grader: { provider: 'openai', model: ' ', baseUrl: '' }, naming: { provider: 'openai-compatible', model: 'x', baseUrl: '' } };
    expect(validateRoles(draft, roles)).toEqual([
      'Grader: enter a model id (or choose "Default").',
      'Lesson names: an OpenAI-compatible server needs its base URL, starting with http:// or https://.',
    ]);
    expect(validateRoles(rolesDraft(roles), roles)).toEqual([]);
  });
});

describe('a usage row names the model that ran', () => {
  it('reads usage.model and shows it after the usage', () => {
    const row = normalizeActivityRow({
      id: 'ps_1:grade:p1',
      source: 'ps_1:grade:p1',
      kind: 'practice',
      label: 'Grading 1/3',
      phase: 'done',
      usage: { inputTokens: 10, outputTokens: 5, requests: 1, costUsd: null, model: 'gpt-grade' },
    });
    expect(row).not.toBeNull();
    expect(row!.usage.model).toBe('gpt-grade');
    expect(formatRowUsage(row!)).toBe('10 in / 5 out tokens · cost unknown · 1 model call · on gpt-grade');
    const unnamed = normalizeActivityRow({ id: 'x', source: 'x', phase: 'done', usage: { requests: 1, model: '  ' } });
    expect(unnamed!.usage.model).toBeUndefined();
    expect(formatRowUsage({ ...row!, phase: 'grading' })).toBe('usage counted when it ends · on gpt-grade');
  });
});

describe('the offline demo model needs no model id', () => {
  it('validates and sends the offline model for a role or slot left without an id', () => {
    const roles = [{ role: 'grader', label: 'Grader', default: 'strong' }] as unknown as Parameters<typeof validateRoles>[1];
    const draft = { grader: { provider: 'local', model: '', baseUrl: '' } } as unknown as Parameters<typeof validateRoles>[0];
    expect(validateRoles(draft, roles)).toEqual([]);
    expect(rolesUpdate(draft).grader).toEqual({ provider: 'local', model: OFFLINE_MODEL_ID });
    const keyed = { grader: { provider: 'openai', model: ' ', baseUrl: '' } } as unknown as Parameters<typeof validateRoles>[0];
    expect(validateRoles(keyed, roles)).toEqual(['Grader: enter a model id (or choose "Default").']);
    expect(modelIdOf({ provider: 'local', model: 'other.gguf' })).toBe('other.gguf');
  });
});
