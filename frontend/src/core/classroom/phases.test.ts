import { describe, expect, it } from 'vitest';
import { parseAssessment, phaseOf, probeAssessment } from './phases';
import type { MessageLike } from '../toolParts';

const ASSESSMENT = { topic: 'derivatives', goal: 'understand', floor: 'arithmetic', ceiling: 'limits', level: 'beginner' };
const PLAN = { title: 'P', nodes: [{ id: 'a', label: 'A' }], edges: [] };

function assistant(...parts: unknown[]): MessageLike {
  return { id: 'a', role: 'assistant', parts };
}
const probeDone = (state = 'output-available', input: unknown = ASSESSMENT) => ({
  type: 'tool-probe_done',
  toolCallId: 'pd',
  state,
  input,
  output: 'Final result processed.',
});
const planInit = (state = 'output-available') => ({
  type: 'tool-plan_init',
  toolCallId: 'pi',
  state,
  input: { title: 'P', mermaid: 'graph TD\n a[A]' },
  output: state === 'output-available' ? { ok: true, plan: PLAN } : undefined,
  errorText: state === 'output-error' ? 'cycle' : undefined,
});

describe('phaseOf', () => {
  it('starts in probe', () => {
    expect(phaseOf([])).toBe('probe');
    expect(phaseOf([{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }])).toBe('probe');
  });

  it('stays in probe until probe_done succeeded with a full assessment', () => {
    expect(phaseOf([assistant(probeDone('input-available'))])).toBe('probe');
    expect(phaseOf([assistant(probeDone('output-available', { ...ASSESSMENT, level: 'guru' }))])).toBe('probe');
    expect(phaseOf([assistant(probeDone('output-available', { topic: 't' }))])).toBe('probe');
    // a plan before the probe finished does not skip the probe
    expect(phaseOf([assistant(planInit())])).toBe('probe');
  });

  it('is plan after the probe, teach once a plan exists', () => {
    expect(phaseOf([assistant(probeDone())])).toBe('plan');
    expect(phaseOf([assistant(probeDone(), planInit('output-error'))])).toBe('plan');
    expect(phaseOf([assistant(probeDone(), planInit('output-error'), planInit())])).toBe('teach');
  });
});

describe('probeAssessment', () => {
  it('defaults notes and ignores user messages', () => {
    expect(probeAssessment([assistant(probeDone())])).toEqual({ ...ASSESSMENT, notes: '' });
    expect(probeAssessment([{ id: 'u', role: 'user', parts: [probeDone()] }])).toBeNull();
  });

  it('refuses extra fields like the server', () => {
    expect(parseAssessment({ ...ASSESSMENT, extra: 1 })).toBeNull();
  });
});
