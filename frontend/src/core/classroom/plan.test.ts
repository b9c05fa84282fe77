import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { derivePlanStatuses, parsePlan, planLayers, planOf, prerequisitesOf, type Plan } from './plan';
import type { MessageLike } from '../toolParts';

// The shared vectors (tests/vectors/generate.py); the Python core passes the same file.
interface PlanVectors {
  plans: { name: string; source: string; plan?: Plan; error?: string }[];
  statusPlan: Plan;
  statuses: { name: string; messages: MessageLike[]; statuses: Record<string, string> }[];
}

const vectors = JSON.parse(readFileSync(new URL('../../../../tests/vectors/plan.json', import.meta.url), 'utf8')) as PlanVectors;

describe('vectors: statuses', () => {
  it.each(vectors.statuses.map((s) => [s.name, s] as const))('%s', (_name, s) => {
    expect(derivePlanStatuses(vectors.statusPlan, s.messages)).toEqual(s.statuses);
  });
});

describe('vectors: parsed plans are valid plan objects', () => {
  it.each(vectors.plans.filter((p) => p.plan).map((p) => [p.name, p.plan!] as const))('%s', (_name, plan) => {
    expect(parsePlan(plan)).toEqual(plan);
    expect(planLayers(plan).flat().sort()).toEqual(plan.nodes.map((n) => n.id).sort());
  });
});

const plan: Plan = vectors.statusPlan;

function planPart(state: string, output: unknown, id = 'p1') {
  return { type: 'tool-plan_init', toolCallId: id, state, input: { title: 'T', mermaid: 'graph TD' }, output };
}

describe('planOf', () => {
  it('is null without a successful plan_init', () => {
    expect(planOf([])).toBeNull();
    expect(planOf([{ id: 'a', role: 'assistant', parts: [planPart('output-error', undefined)] }])).toBeNull();
    expect(planOf([{ id: 'a', role: 'assistant', parts: [planPart('output-available', { ok: true, plan: { title: 1 } })] }])).toBeNull();
  });

  it('takes the first successful one, from assistant messages only', () => {
    const other = { ...plan, title: 'Other' };
    const messages: MessageLike[] = [
      { id: 'u', role: 'user', parts: [planPart('output-available', { ok: true, plan: other })] },
      {
        id: 'a',
        role: 'assistant',
        parts: [
          planPart('output-error', undefined, 'p0'),
          planPart('output-available', { ok: true, plan }, 'p1'),
          planPart('output-available', { ok: true, plan: other }, 'p2'),
        ],
      },
    ];
    expect(planOf(messages)).toEqual(plan);
  });

  it('refuses a plan with extra fields (PlanTree forbids them)', () => {
    expect(parsePlan({ ...plan, extra: 1 })).toBeNull();
  });
});

describe('planLayers / prerequisitesOf', () => {
  it('layers by the deepest prerequisite, keeping authored order', () => {
    const fan: Plan = {
      title: 'x',
      nodes: ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => ({ id, label: id.toUpperCase() })),
      edges: [
        ['a', 'b'],
        ['b', 'c'],
        ['a', 'd'],
        ['b', 'd'],
        ['d', 'e'],
        ['d', 'f'],
      ],
    };
    expect(planLayers(fan)).toEqual([['a'], ['b'], ['c', 'd'], ['e', 'f']]);
    expect(prerequisitesOf(fan).d).toEqual(['a', 'b']);
  });

  it('survives a cycle and unknown ids', () => {
    const bad: Plan = {
      title: 'x',
      nodes: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
        { id: 'c', label: 'C' },
      ],
      edges: [
        ['a', 'b'],
        ['b', 'a'],
        ['zz', 'c'],
      ],
    };
    expect(planLayers(bad)).toEqual([['c'], ['a', 'b']]);
  });
});
