// Render tests of the Workbench's cards in the lesson transcript (server-side rendering, no DOM):
// steers drawn as artifact cards and never as learner bubbles, a result streamed into a turn,
// dispatch cards following the jobs. The dock's background agents are tested in
// machine_room/activityDock.test.ts, the web research settings in machine_room/researchSettings.test.ts.
import type { UIMessage } from 'ai';
import { createElement, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { normalizeJobs, type JobRecord } from '../../core/workbench/workbench';
import { WorkbenchProvider } from '../workbench/workbenchState';
import MessageView from './MessageView';

const research = {
  kind: 'research',
  question: 'Who first proved the four colour theorem?',
  summary: 'Appel and Haken [1], checked again in 2005 [2].',
  sources: [
    { title: 'Four color theorem', url: 'https://en.wikipedia.org/wiki/Four_color_theorem' },
    { title: 'Formal proof', url: 'https://www.ams.org/notices/200811/tx081101382p.pdf' },
  ],
};
const demo = { kind: 'demo', title: 'Pendulum', html: '<!doctype html><script>go()</script>', checks: ['the bob swings', 'no console errors'] };
const visual = { kind: 'visual', title: 'A triangle', svg: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', lookedAt: false, checks: [] };

function steer(jobId: string, kind: string, status: string, artifact: unknown, error: string | null = null): UIMessage {
  const id = `steer_${jobId}_${status === 'aborted' ? 'abort' : 'result'}`;
  return {
    id,
    role: 'user',
    metadata: { steer: true, jobId },
    parts: [
      { type: 'text', text: `[background ${kind} ${jobId} finished] THE MODEL'S TEXT` },
      { type: 'data-subagent-artifact', id, data: { jobId, kind, status, toolCallId: `call_${jobId}`, artifact, error } },
    ],
  } as UIMessage;
}

function wrap(node: ReactNode, messages: UIMessage[] = [], jobs: JobRecord[] | null = null): string {
  return renderToStaticMarkup(createElement(MemoryRouter, null, createElement(WorkbenchProvider, { jobs, messages, children: node })));
}

function view(message: UIMessage, messages: UIMessage[] = [message], jobs: JobRecord[] | null = null, streaming = false): string {
  return wrap(createElement(MessageView, { message, streaming }), messages, jobs);
}

describe('steers', () => {
  it('a research steer is an artifact card, never a learner bubble, and its text for the model is not shown', () => {
    const html = view(steer('job_r', 'research', 'done', research));
    expect(html).not.toContain('message-user');
    expect(html).not.toContain('bubble');
    expect(html).not.toContain("THE MODEL'S TEXT");
    expect(html).toContain('data-testid="artifact-card"');
    expect(html).toContain('id="artifact-job_r"');
    expect(html).toContain('Who first proved the four colour theorem?');
    // [1] links to source 1 in the list; sources open in a new tab without the opener
    expect(html).toContain('href="#artifact-job_r-src-1"');
    expect(html).toContain('id="artifact-job_r-src-1"');
    expect(html).toContain('href="https://en.wikipedia.org/wiki/Four_color_theorem" target="_blank" rel="noopener noreferrer"');
    expect(html).not.toMatch(/href="#artifact-job_r-src-1"[^>]*target=/);
    expect(html).toContain('>[1]</a>');
    expect(html).not.toContain('katex');
  });

  it('a demo runs in a sandbox with scripts only, from its own page (never a srcdoc), with an expand control and its checks', () => {
    const html = view(steer('job_d', 'demo', 'done', demo));
    const iframe = /<iframe[^>]*>/.exec(html)?.[0] ?? '';
    expect(iframe).toContain('sandbox="allow-scripts"');
    expect(iframe).not.toContain('allow-same-origin');
    expect(iframe).toContain('src="/api/jobs/job_d/demo"');
    expect(iframe).not.toContain('srcdoc');
    expect(html).toContain('height:360px');
    expect(html).toContain('data-testid="demo-expand"');
    expect(html).toContain('the bob swings');
  });

  it('a visual is only ever an img of a data URL, with the not-looked-at note', () => {
    const html = view(steer('job_v', 'visual', 'done', visual));
    expect(html).toMatch(/<img src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="A triangle"/);
    expect(html).not.toContain('<svg');
    expect(html).not.toContain('<script');
    expect(html).toContain('not looked at by a vision model'.replace(/^n/, 'N'));
    const looked = view(steer('job_v2', 'visual', 'done', { ...visual, lookedAt: true }));
    expect(looked).not.toContain('visual-not-looked-at');
  });

  it('a failed or stopped job is a small muted card', () => {
    const failed = view(steer('job_e', 'demo', 'error', null, 'the page threw on load'));
    expect(failed).toContain('artifact-muted');
    expect(failed).toContain('The demo failed: the page threw on load.');
    const stopped = view(steer('job_a', 'research', 'aborted', null));
    expect(stopped).toContain('The research was stopped before it finished.');
  });

  it('a learner message stays a bubble', () => {
    const html = view({ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] } as UIMessage);
    expect(html).toContain('data-testid="message-user"');
    expect(html).toContain('hello');
  });
});

describe('live chunks in a running turn', () => {
  const live = {
    id: 'a1',
    role: 'assistant',
    parts: [
      { type: 'text', text: 'Here is what I found.' },
      { type: 'data-enqueued-messages', data: { ids: ['x'] } },
      { type: 'data-subagent-artifact', id: 'steer_job_r_result', data: { jobId: 'job_r', kind: 'research', status: 'done', toolCallId: 'call_job_r', artifact: research, error: null } },
    ],
  } as UIMessage;

  it('render the same artifact card; the enqueued-messages part renders nothing', () => {
    const html = view(live, [live], null, true);
    expect(html).toContain('data-testid="artifact-card"');
    expect(html).toContain('id="artifact-job_r"');
    expect(html).not.toContain('enqueued');
    expect(html).not.toContain('&quot;ids&quot;');
  });

  it('the saved steer of the same result is not drawn twice', () => {
    const saved = steer('job_r', 'research', 'done', research);
    expect(view(live, [live, saved])).toContain('artifact-card');
    expect(view(saved, [live, saved])).not.toContain('artifact-card');
  });
});

describe('dispatch cards', () => {
  const call = (state: string, output?: unknown): UIMessage =>
    ({
      id: 'a2',
      role: 'assistant',
      parts: [{ type: 'tool-research', toolCallId: 'call_job_r', state, input: { question: 'Who proved it?' }, output }],
    }) as UIMessage;
  const job = (status: string) =>
    normalizeJobs({ jobs: [{ id: 'job_r', chatId: 'c', toolCallId: 'call_job_r', kind: 'research', input: {}, status, createdAt: 't', delivery: { kind: 'result', status: 'delivered', steerId: 's' } }] });
  const status = (html: string) =>
    /data-testid="dispatch-status">(.*?)<\/span>/.exec(html.replace(/<span class="spinner[^"]*" aria-hidden="true"><\/span>/g, ''))?.[1];

  it('say what was asked and follow the job: working…, then finished — never delivered', () => {
    const message = call('output-available', { jobId: 'job_r', status: 'working', note: 'started' });
    const working = view(message, [message], job('running'));
    expect(working).toContain('Researching: Who proved it?');
    expect(status(working)).toBe('working…');
    const done = view(message, [message], job('done'));
    expect(status(done)).toBe('finished');
    expect(done).not.toMatch(/deliver/i);
    expect(status(view(message, [message], job('aborted')))).toBe('stopped');
    expect(status(view(message, [message], job('error')))).toBe('failed');
  });

  it('offer to jump to the artifact once it is in the transcript', () => {
    const message = call('output-available', { jobId: 'job_r', status: 'working' });
    expect(view(message, [message], job('done'))).not.toContain('dispatch-show');
    const saved = steer('job_r', 'research', 'done', research);
    expect(view(message, [message, saved], job('done'))).toContain('data-testid="dispatch-show"');
  });

  it('demo and visual calls have their own words', () => {
    const m = {
      id: 'a3',
      role: 'assistant',
      parts: [
        { type: 'tool-demo', toolCallId: 't1', state: 'input-available', input: { request: 'a pendulum' } },
        { type: 'tool-visual', toolCallId: 't2', state: 'output-available', input: { request: 'a triangle' }, output: { jobId: 'job_x', status: 'working' } },
      ],
    } as UIMessage;
    const html = view(m);
    expect(html).toContain('Building a demo: a pendulum');
    expect(html).toContain('Drawing: a triangle');
  });
});
