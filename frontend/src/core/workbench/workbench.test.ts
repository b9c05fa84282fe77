import { describe, expect, it } from 'vitest';
import {
  ARTIFACT_PART,
  artifactIndex,
  demoUrl,
  dispatchStatus,
  dispatchTitle,
  isSteerMessage,
  linkCitations,
  normalizeJobs,
  readArtifactPart,
  safeUrl,
  showsArtifactHere,
  sourceAnchor,
  svgDataUrl,
} from './workbench';

const research = {
  kind: 'research',
  question: 'Who proved it?',
  summary: 'Euler did [1], later refined [2, 3].',
  sources: [
    { title: 'One', url: 'https://a.example/1' },
    { title: 'Two', url: 'https://b.example/2' },
    { title: 'Three', url: 'https://c.example/3' },
  ],
};

function steer(jobId: string, status: string, artifact: unknown, kind = 'result', toolCallId = `call_${jobId}`) {
  const id = `steer_${jobId}_${kind}`;
  return {
    id,
    role: 'user',
    metadata: { steer: true, jobId },
    parts: [
      { type: 'text', text: `[background research ${jobId} finished] for the model` },
      { type: ARTIFACT_PART, id, data: { jobId, kind: 'research', status, toolCallId, artifact, error: status === 'error' ? 'no results' : null } },
    ],
  };
}

describe('steer messages', () => {
  it('a user message carrying an artifact part is a steer; a learner message is not', () => {
    expect(isSteerMessage(steer('job_1', 'done', research))).toBe(true);
    expect(isSteerMessage({ role: 'user', parts: [{ type: 'text', text: 'hi' }] })).toBe(false);
    expect(isSteerMessage({ role: 'assistant', parts: [{ type: ARTIFACT_PART, data: { jobId: 'job_1' } }] })).toBe(false);
  });

  it('reads the artifact part defensively', () => {
    const data = readArtifactPart(steer('job_1', 'done', research).parts[1]);
    expect(data?.jobId).toBe('job_1');
    expect(data?.status).toBe('done');
    expect(data?.artifact?.kind).toBe('research');
    expect(readArtifactPart({ type: ARTIFACT_PART, data: {} })).toBeNull();
    expect(readArtifactPart({ type: 'text', text: 'x' })).toBeNull();
    // done without a readable artifact is shown as failed, not as an empty card
    expect(readArtifactPart(steer('job_2', 'done', { kind: 'demo' }).parts[1])?.status).toBe('error');
    const aborted = readArtifactPart(steer('job_3', 'aborted', null, 'abort').parts[1]);
    expect(aborted?.status).toBe('aborted');
    expect(aborted?.artifact).toBeNull();
    const visual = readArtifactPart({ type: ARTIFACT_PART, data: { jobId: 'j', kind: 'visual', status: 'done', artifact: { kind: 'visual', title: 'T', svg: '<svg/>' } } });
    expect(visual?.artifact).toEqual({ kind: 'visual', title: 'T', svg: '<svg/>', lookedAt: false, checks: [] });
  });

  it('indexes each job once: the first message carrying it, a result over an abort notice', () => {
    const live = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'x' }, steer('job_1', 'done', research).parts[1]] };
    const saved = steer('job_1', 'done', research);
    const index = artifactIndex([live, saved]);
    expect(index.byJob.get('job_1')?.messageId).toBe('a1');
    expect(index.byToolCall.get('call_job_1')?.anchor).toBe('artifact-job_1');
    const savedData = readArtifactPart(saved.parts[1])!;
    expect(showsArtifactHere(index, savedData, saved.id)).toBe(false);
    expect(showsArtifactHere(index, savedData, 'a1')).toBe(true);
    expect(showsArtifactHere(artifactIndex([]), savedData, saved.id)).toBe(true);
  });
});

describe('dispatch cards', () => {
  it('say what the teacher asked for', () => {
    expect(dispatchTitle('research', { question: 'Who proved it?' })).toBe('Researching: Who proved it?');
    expect(dispatchTitle('demo', { request: 'a pendulum' })).toBe('Building a demo: a pendulum');
    expect(dispatchTitle('visual', { request: 'a triangle' })).toBe('Drawing: a triangle');
    expect(dispatchTitle('visual', undefined)).toBe('Drawing…');
  });

  it('take their status from the job, never "delivered"', () => {
    const part = { state: 'output-available', output: { jobId: 'job_1', status: 'working', note: 'started' } };
    expect(dispatchStatus(part, { status: 'running', error: null }).text).toBe('working…');
    expect(dispatchStatus(part, { status: 'done', error: null }).text).toBe('finished');
    expect(dispatchStatus(part, { status: 'error', error: 'no results' })).toEqual({ state: 'failed', text: 'failed', detail: 'no results' });
    expect(dispatchStatus(part, { status: 'aborted', error: null }).text).toBe('stopped');
    for (const s of ['running', 'done', 'error', 'aborted'] as const) expect(dispatchStatus(part, { status: s, error: null }).text).not.toMatch(/deliver/i);
  });

  it('without a job record: the artifact, then the tool call', () => {
    const part = { state: 'output-available', output: { jobId: 'job_1', status: 'working' } };
    expect(dispatchStatus(part, null).text).toBe('working…');
    expect(dispatchStatus(part, null, { status: 'done', error: null }).text).toBe('finished');
    expect(dispatchStatus(part, null, { status: 'aborted', error: null }).text).toBe('stopped');
    expect(dispatchStatus({ state: 'input-streaming' }, null).text).toBe('starting…');
    expect(dispatchStatus({ state: 'output-error', errorText: 'no provider' }, null)).toEqual({ state: 'failed', text: 'failed', detail: 'no provider' });
  });

  it('jobs are read defensively', () => {
    const jobs = normalizeJobs({
      jobs: [
        { id: 'job_1', chatId: 'c', toolCallId: 't', kind: 'demo', input: { request: 'x' }, status: 'done', createdAt: 'now', delivery: { kind: 'result', status: 'delivered', steerId: 's' } },
        { id: 'job_2', kind: 'poem', status: 'done' },
        { id: 'job_3', kind: 'visual', status: 'weird' },
        'junk',
      ],
    });
    expect(jobs.map((j) => j.id)).toEqual(['job_1']);
    expect(jobs[0].delivery?.status).toBe('delivered');
    expect(jobs[0].usage).toEqual({ inputTokens: null, outputTokens: null, requests: 0, costUsd: null });
    expect(normalizeJobs(null)).toEqual([]);
  });
});

describe('demo page', () => {
  it('is the server route of the job, its id escaped', () => {
    expect(demoUrl('job_abc-1')).toBe('/api/jobs/job_abc-1/demo');
    expect(demoUrl('job_../x?y')).toBe('/api/jobs/job_..%2Fx%3Fy/demo');
  });
});

describe('visual data url', () => {
  it('is base64 of the UTF-8 SVG', () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><text>π ≈ 3.14</text></svg>';
    const url = svgDataUrl(svg);
    expect(url.startsWith('data:image/svg+xml;base64,')).toBe(true);
    expect(Buffer.from(url.slice('data:image/svg+xml;base64,'.length), 'base64').toString('utf8')).toBe(svg);
  });
});

describe('citations', () => {
  it('link [n] to the numbered sources', () => {
    expect(linkCitations('Euler did [1].', 3, 'job_1')).toBe(`Euler did [&#91;1&#93;](#${sourceAnchor('job_1', 1)}).`);
    expect(sourceAnchor('job_1', 2)).toBe('artifact-job_1-src-2');
    expect(linkCitations('a [2, 3] b', 3, 'job_1')).toBe('a [&#91;2&#93;](#artifact-job_1-src-2)[&#91;3&#93;](#artifact-job_1-src-3) b');
    expect(linkCitations('a [1][2]', 2, 'j')).toBe('a [&#91;1&#93;](#artifact-j-src-1)[&#91;2&#93;](#artifact-j-src-2)');
  });

  it('leave numbers without a source, links and definitions alone', () => {
    expect(linkCitations('see [4]', 3, 'j')).toBe('see [4]');
    expect(linkCitations('see [0]', 3, 'j')).toBe('see [0]');
    expect(linkCitations('[1](https://x.example)', 3, 'j')).toBe('[1](https://x.example)');
    expect(linkCitations('[1]: https://x.example', 3, 'j')).toBe('[1]: https://x.example');
    expect(linkCitations('an array a[i]', 3, 'j')).toBe('an array a[i]');
  });

  it('only web links are links', () => {
    expect(safeUrl('https://a.example/x')).toBe('https://a.example/x');
    expect(safeUrl('javascript:alert(1)')).toBeNull();
    expect(safeUrl('not a url')).toBeNull();
  });
});
