// The lesson plan as the browser sees it (mirrors server/core/classroom/plan_tree.py
// `plan_of` and `derive_statuses`). Statuses are never stored: they are folded
// from the transcript's tagged quiz calls and the teacher's `plan_teach` calls.

import { asToolPart, type MessageLike } from '../toolParts';
import { toolParts } from './transcript';

export type PlanStatus = 'current' | 'visited' | 'upcoming';

export interface PlanNode {
  id: string;
  label: string;
}

export interface Plan {
  title: string;
  nodes: PlanNode[];
  /** [from, to]: prerequisite -> dependent. */
  edges: [string, string][];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A valid plan object (the shape of PlanTree), or null. */
export function parsePlan(raw: unknown): Plan | null {
  if (!isRecord(raw) || typeof raw.title !== 'string' || !Array.isArray(raw.nodes) || !Array.isArray(raw.edges)) return null;
  // PlanTree forbids extra fields (server/core/contracts/plan.py).
  if (Object.keys(raw).some((k) => k !== 'title' && k !== 'nodes' && k !== 'edges')) return null;
  const nodes: PlanNode[] = [];
  for (const n of raw.nodes) {
    if (!isRecord(n) || typeof n.id !== 'string' || typeof n.label !== 'string') return null;
    nodes.push({ id: n.id, label: n.label });
  }
  const edges: [string, string][] = [];
  for (const e of raw.edges) {
    if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string' || typeof e[1] !== 'string') return null;
    edges.push([e[0], e[1]]);
  }
  return { title: raw.title, nodes, edges };
}

/** The session's plan: the first successful `plan_init` result in the transcript, or null. */
export function planOf(messages: readonly MessageLike[]): Plan | null {
  for (const part of toolParts(messages, 'plan_init')) {
    if (part.state !== 'output-available' || !isRecord(part.output) || !('plan' in part.output)) continue;
    const plan = parsePlan(part.output.plan);
    if (plan) return plan;
  }
  return null;
}

/**
 * Node statuses from the transcript's node tags: a quiz call's `node` (asked
 * counts) or a successful `plan_teach` call's `node` (the teacher naming the
 * node it teaches). The latest tag's node is `current`; every other tagged
 * node is `visited`; the rest are `upcoming`. Tags naming no plan node are
 * ignored.
 */
export function derivePlanStatuses(plan: Plan, messages: readonly MessageLike[]): Record<string, PlanStatus> {
  const known = new Set(plan.nodes.map((n) => n.id));
  const touched: string[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const raw of message.parts) {
      const part = asToolPart(raw);
      if (!part || (part.type !== 'tool-quiz' && part.type !== 'tool-plan_teach')) continue;
      if (part.type === 'tool-plan_teach' && part.state !== 'output-available') continue;
      const node = isRecord(part.input) ? part.input.node : undefined;
      if (typeof node === 'string' && known.has(node)) touched.push(node);
    }
  }
  const statuses: Record<string, PlanStatus> = {};
  for (const n of plan.nodes) statuses[n.id] = 'upcoming';
  for (const id of touched) statuses[id] = 'visited';
  if (touched.length) statuses[touched[touched.length - 1]] = 'current';
  return statuses;
}

/**
 * Topological layers for display: a node sits one layer below its deepest
 * prerequisite; within a layer nodes keep their authored order. Edges naming
 * unknown nodes are ignored; a cycle (which the server refuses) falls back to
 * putting the remaining nodes in a last layer.
 */
export function planLayers(plan: Plan): string[][] {
  const ids = plan.nodes.map((n) => n.id);
  const known = new Set(ids);
  const prereqs = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const [from, to] of plan.edges) {
    if (known.has(from) && known.has(to) && from !== to) prereqs.get(to)!.push(from);
  }
  const depth = new Map<string, number>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const id of ids) {
      if (depth.has(id)) continue;
      const reqs = prereqs.get(id)!;
      if (reqs.every((r) => depth.has(r))) {
        depth.set(id, reqs.length ? Math.max(...reqs.map((r) => depth.get(r)!)) + 1 : 0);
        changed = true;
      }
    }
  }
  const maxDepth = depth.size ? Math.max(...depth.values()) : -1;
  const layers: string[][] = Array.from({ length: maxDepth + 1 }, () => []);
  const rest: string[] = [];
  for (const id of ids) {
    const d = depth.get(id);
    if (d === undefined) rest.push(id);
    else layers[d].push(id);
  }
  if (rest.length) layers.push(rest);
  return layers;
}

/** Prerequisites of each node (ids), in edge order. */
export function prerequisitesOf(plan: Plan): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const n of plan.nodes) out[n.id] = [];
  for (const [from, to] of plan.edges) if (out[to] && !out[to].includes(from)) out[to].push(from);
  return out;
}
