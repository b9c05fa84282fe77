import { describe, expect, it } from 'vitest';
import { runConfirmedDelete, type DeleteSteps } from './confirmDelete';

function recorder(remove: (target: string) => Promise<void>): { log: string[]; steps: DeleteSteps<string> } {
  const log: string[] = [];
  return {
    log,
    steps: {
      remove: async (t) => {
        log.push(`remove ${t}`);
        await remove(t);
      },
      setBusy: (b) => log.push(`busy ${b}`),
      setError: (e) => log.push(`error ${e}`),
      setTarget: (t) => log.push(`target ${t}`),
      settle: () => log.push('settle'),
    },
  };
}

describe('runConfirmedDelete', () => {
  it('does nothing without a target', async () => {
    const { log, steps } = recorder(async () => undefined);
    await runConfirmedDelete(null, steps);
    expect(log).toEqual([]);
  });

  it('clears the target after a delete that worked, then settles', async () => {
    const { log, steps } = recorder(async () => undefined);
    await runConfirmedDelete('a', steps);
    expect(log).toEqual(['busy true', 'error null', 'remove a', 'target null', 'busy false', 'settle']);
  });

  it('keeps the target and shows the plain-words detail when the delete failed', async () => {
    const { log, steps } = recorder(async () => {
      throw new Error(JSON.stringify({ error: 'not_found', detail: 'That set is gone.' }));
    });
    await runConfirmedDelete('b', steps);
    expect(log).toEqual(['busy true', 'error null', 'remove b', 'error That set is gone.', 'busy false', 'settle']);
  });
});
