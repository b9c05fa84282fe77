// Render test of the web research settings (server-side rendering, no DOM).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { normalizeResearchSettings, researchDraft } from '../../core/machine_room/research';
import { ResearchForm } from './ResearchSettings';

describe('web research settings', () => {
  const form = (raw: unknown, draft?: Partial<ReturnType<typeof researchDraft>>) => {
    const settings = normalizeResearchSettings(raw);
    const noop = () => undefined;
    return renderToStaticMarkup(createElement(ResearchForm, { settings, draft: { ...researchDraft(settings), ...draft }, onDraft: noop, onSaved: noop, onKeys: noop }));
  };

  it('with no provider: explains the teacher gets no research tool, no key field', () => {
    const html = form({ provider: null, keys: {} });
    expect(html).toContain('not offered the research tool');
    expect(html).not.toContain('research-key-input');
    expect(html).toContain('Google Programmable Search');
  });

  it('Google: the cx field and the key row saying "key stored", never the key', () => {
    const html = form({ provider: 'google', googleCx: 'abc123', keys: { google: true } });
    expect(html).toContain('data-testid="research-google-cx"');
    expect(html).toContain('value="abc123"');
    expect(html).toContain('key stored');
    expect(html).toMatch(/data-testid="research-key-input"[^>]*value=""/);
    expect(form({ provider: 'tavily', keys: {} })).not.toContain('research-google-cx');
  });
});
