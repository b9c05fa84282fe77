import { describe, expect, it } from 'vitest';
import { aboutDuration, demoWaitLine, isDemoReply, needsDemoConfirm } from './demo';

describe('isDemoReply', () => {
  it('is true only for metadata that says demo: true', () => {
    expect(isDemoReply({ demo: true })).toBe(true);
    expect(isDemoReply({ demo: true, interrupted: true })).toBe(true);
    for (const other of [undefined, null, 'demo', { demo: 'true' }, { demo: 1 }, { demo: false }, {}, []]) {
      expect(isDemoReply(other)).toBe(false);
    }
  });
});

describe('demoWaitLine', () => {
  it('gives the expected wait while the demo model writes, from the measured speed', () => {
    expect(demoWaitLine({ tokensPerSecond: 3.25, expectedWaitS: 41.6 }, true)).toBe(
      'The demo model is writing a reply: expect about 42 s (it writes 3.3 tokens/s on this computer).',
    );
    expect(demoWaitLine({ tokensPerSecond: 12.4, expectedWaitS: 150 }, false)).toBe(
      'On this computer the demo model writes 12 tokens/s: a reply takes about 3 min.',
    );
  });
  it('says the speed is not measured yet, and nothing when idle', () => {
    for (const offline of [undefined, null, {}, { tokensPerSecond: null, expectedWaitS: null }, { tokensPerSecond: 0, expectedWaitS: 5 }]) {
      expect(demoWaitLine(offline, true)).toMatch(/measured after its first reply/);
      expect(demoWaitLine(offline, false)).toBeNull();
    }
  });
  it('never says less than a second', () => {
    expect(aboutDuration(0.2)).toBe('about 1 s');
    expect(aboutDuration(59.4)).toBe('about 59 s');
    expect(aboutDuration(90)).toBe('about 2 min');
  });
});

describe('needsDemoConfirm', () => {
  it('asks before a lesson is switched to the offline demo model', () => {
    expect(needsDemoConfirm('openai', 'local')).toBe(true);
    expect(needsDemoConfirm(null, 'local')).toBe(true);
    expect(needsDemoConfirm(undefined, 'local')).toBe(true);
  });
  it('does not ask for a lesson already on it, nor for any other provider', () => {
    expect(needsDemoConfirm('local', 'local')).toBe(false);
    for (const next of ['openai', 'openrouter', 'openai-compatible', 'chatgpt', '']) {
      expect(needsDemoConfirm('local', next)).toBe(false);
      expect(needsDemoConfirm('openai', next)).toBe(false);
    }
  });
});
