import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { cutShortNote } from './MessageView';

function reply(metadata: unknown): UIMessage {
  return { id: 'm1', role: 'assistant', parts: [{ type: 'text', text: 'Hello' }], metadata } as UIMessage;
}

describe('cutShortNote', () => {
  it('is null for a finished reply', () => {
    expect(cutShortNote(reply(undefined))).toBeNull();
    expect(cutShortNote(reply({ interrupted: false }))).toBeNull();
  });

  it('says why a reply was cut short, once, with one period', () => {
    expect(cutShortNote(reply({ interrupted: true, error: 'the model stopped sending for 60 s.' }))).toBe(
      'This reply was cut short: the model stopped sending for 60 s.',
    );
    expect(cutShortNote(reply({ interrupted: true }))).toBe('This reply was cut short (stopped before it finished).');
  });
});
