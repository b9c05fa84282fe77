import { describe, expect, it } from 'vitest';
import { jobUsageLine, normalizeJobs } from './workbench';

function job(status: string, usage: Record<string, unknown>) {
  const [record] = normalizeJobs({ jobs: [{ id: 'job_1', chatId: 'c', toolCallId: 't', kind: 'visual', status, usage }] });
  return record;
}

describe('a Workbench job names the model that ran (issue 30 item 2)', () => {
  it('reads the models of an ended job and says them after its usage', () => {
    const done = job('done', { inputTokens: 10, outputTokens: 20, requests: 1, costUsd: null, model: 'gpt-x', visionModel: 'gpt-v' });
    expect(done.usage.model).toBe('gpt-x');
    expect(jobUsageLine(done)).toBe('10 in / 20 out tokens · cost unknown · 1 model call · on gpt-x (picture checked by gpt-v)');
    const failed = job('error', { inputTokens: null, outputTokens: null, requests: 2, costUsd: 0.5, model: 'gpt-x' });
    expect(jobUsageLine(failed)).toBe('unknown in / unknown out tokens · $0.50 · 2 model calls · on gpt-x');
  });

  it('says nothing while running, without model calls, or for a missing job', () => {
    expect(jobUsageLine(job('running', { requests: 0, model: 'gpt-x' }))).toBe('');
    expect(jobUsageLine(job('done', { requests: 0 }))).toBe('');
    expect(jobUsageLine(undefined)).toBe('');
    const old = job('done', { inputTokens: 1, outputTokens: 1, requests: 1, costUsd: null }); // written before models were named
    expect(old.usage.model).toBeUndefined();
    expect(jobUsageLine(old)).toBe('1 in / 1 out tokens · cost unknown · 1 model call');
  });
});
