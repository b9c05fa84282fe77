// Lesson phases, folded from the transcript: probe -> plan -> teach, strictly
// (mirrors server/core/classroom/phases.py and transcript.py `probe_assessment`).

import { planOf } from './plan';
import { toolNameOf, asToolPart, type MessageLike } from '../toolParts';

export type Phase = 'probe' | 'plan' | 'teach';
export const PHASES: readonly Phase[] = ['probe', 'plan', 'teach'];

export const LEVELS = ['none', 'beginner', 'intermediate', 'advanced', 'expert'] as const;
export type Level = (typeof LEVELS)[number];

export interface ProbeAssessment {
  topic: string;
  goal: string;
  floor: string;
  ceiling: string;
  level: Level;
  notes: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Field -> max length (ProbeAssessment in server/core/contracts/probe.py; extra fields are refused).
const LIMITS = { topic: 300, goal: 1000, floor: 1000, ceiling: 1000 } as const;
const ALLOWED = new Set(['topic', 'goal', 'floor', 'ceiling', 'level', 'notes']);

/** The input of a probe_done call as an assessment, or null when it is not a valid one. */
export function parseAssessment(raw: unknown): ProbeAssessment | null {
  if (!isRecord(raw) || Object.keys(raw).some((k) => !ALLOWED.has(k))) return null;
  for (const [key, max] of Object.entries(LIMITS)) {
    const value = raw[key];
    if (typeof value !== 'string' || value.length < 1 || [...value].length > max) return null;
  }
  if (typeof raw.level !== 'string' || !(LEVELS as readonly string[]).includes(raw.level)) return null;
  if (raw.notes !== undefined && (typeof raw.notes !== 'string' || [...raw.notes].length > 2000)) return null;
  return {
    topic: raw.topic as string,
    goal: raw.goal as string,
    floor: raw.floor as string,
    ceiling: raw.ceiling as string,
    level: raw.level as Level,
    notes: (raw.notes as string | undefined) ?? '',
  };
}

/** The assessment of the first successful `probe_done` call, or null. */
export function probeAssessment(messages: readonly MessageLike[]): ProbeAssessment | null {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const raw of message.parts) {
      const part = asToolPart(raw);
      if (!part || toolNameOf(part) !== 'probe_done' || part.state !== 'output-available') continue;
      const assessment = parseAssessment(part.input);
      if (assessment) return assessment;
    }
  }
  return null;
}

/**
 * `probe` until a probe_done succeeded; then `plan` until a plan_init
 * succeeded; then `teach`. A plan authored before the probe finished does not
 * skip the probe.
 */
export function phaseOf(messages: readonly MessageLike[]): Phase {
  if (probeAssessment(messages) === null) return 'probe';
  return planOf(messages) ? 'teach' : 'plan';
}
