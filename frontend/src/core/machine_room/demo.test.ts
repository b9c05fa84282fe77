import { describe, expect, it } from 'vitest';
import { isDemoReply } from './demo';

describe('isDemoReply', () => {
  it('is true only for metadata that says demo: true', () => {
    expect(isDemoReply({ demo: true })).toBe(true);
    expect(isDemoReply({ demo: true, interrupted: true })).toBe(true);
    for (const other of [undefined, null, 'demo', { demo: 'true' }, { demo: 1 }, { demo: false }, {}, []]) {
      expect(isDemoReply(other)).toBe(false);
    }
  });
});
