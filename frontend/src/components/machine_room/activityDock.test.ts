// Render test of the activity dock's background agents (server-side rendering, no DOM).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { normalizeActivityRow } from '../../core/machine_room/activity';
import { ActivityProvider } from '../../activityState';
import { AgentRows } from './ActivityDock';

describe('activity dock: background agents', () => {
  it('lists job rows with their kind, elapsed time and an Abort', () => {
    const row = normalizeActivityRow({
      id: 'job_r',
      source: 'job_r',
      kind: 'job',
      jobKind: 'demo',
      chatId: 'chat_1',
      label: 'Building a demo: a pendulum',
      phase: 'running',
      queuedAt: new Date(Date.now() - 65_000).toISOString(),
      startedAt: new Date(Date.now() - 65_000).toISOString(),
    })!;
    const html = renderToStaticMarkup(createElement(ActivityProvider, null, createElement(MemoryRouter, null, createElement(AgentRows, { rows: [row] }))));
    expect(html).toContain('Background agents');
    expect(html).toContain('href="/chat/chat_1"');
    expect(html).toContain('Building a demo: a pendulum');
    expect(html).toContain('data-testid="agent-abort"');
    expect(html).toMatch(/running for 1 min 0\d s/);
    expect(html).toContain('>Demo<');
  });
});
