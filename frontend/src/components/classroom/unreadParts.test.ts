import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { unreadPartsNote } from './MessageView';

function learner(parts: unknown[]): Pick<UIMessage, 'parts'> {
  return { parts } as Pick<UIMessage, 'parts'>;
}

describe('unreadPartsNote', () => {
  it('is null when the tutor reads every part: text and images as data URLs', () => {
    expect(unreadPartsNote(learner([{ type: 'text', text: 'Hi' }]))).toBeNull();
    const png = { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' };
    expect(unreadPartsNote(learner([{ type: 'text', text: 'Look' }, png]))).toBeNull();
  });

  it('names the parts an older build let in, once per type', () => {
    const note = unreadPartsNote(
      learner([
        { type: 'text', text: 'Hi' },
        { type: 'reasoning', text: 'hmm' },
        { type: 'step-start' },
        { type: 'reasoning', text: 'again' },
      ]),
    );
    expect(note).toBe(
      '3 parts of this message (reasoning, step-start) are kept but not read by your tutor: the app does not send such parts.',
    );
  });

  it('counts a file the app does not read, or one by URL, as unread', () => {
    const exe = { type: 'file', mediaType: 'application/x-msdownload', url: 'data:application/x-msdownload;base64,TVo=' };
    const byUrl = { type: 'file', mediaType: 'image/png', url: 'file:///etc/passwd' };
    expect(unreadPartsNote(learner([exe]))).toBe(
      'One part of this message (file) is kept but not read by your tutor: the app does not send such parts.',
    );
    expect(unreadPartsNote(learner([{ type: 'text', text: 'x' }, byUrl]))).toContain('One part');
  });
});
