import { describe, expect, it } from 'vitest';
import { asToolPart, toolNameOf } from './toolParts';

describe('toolNameOf / asToolPart', () => {
  it('names tool and dynamic-tool parts', () => {
    expect(toolNameOf({ type: 'tool-quiz' })).toBe('quiz');
    expect(toolNameOf({ type: 'dynamic-tool', toolName: 'x' })).toBe('x');
    expect(toolNameOf({ type: 'text', text: 'a' })).toBeNull();
    expect(toolNameOf(null)).toBeNull();
    expect(asToolPart({ type: 'tool-quiz' })).toBeNull(); // no toolCallId/state
  });
});
