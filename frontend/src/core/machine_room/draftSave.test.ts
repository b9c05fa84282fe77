import { describe, expect, it } from 'vitest';
import { runDraftSave, type DraftSaveSteps } from './draftSave';

type Draft = { n: string };

function recorder(put: (update: number) => Promise<number>): { log: string[]; steps: DraftSaveSteps<Draft, number, number> } {
  const log: string[] = [];
  return {
    log,
    steps: {
      check: (d) => {
        const n = Number(d.n);
        return Number.isInteger(n) ? { update: n, problems: [] } : { update: null, problems: ['Not a whole number.', 'Try again.'] };
      },
      put: async (u) => {
        log.push(`put ${u}`);
        return put(u);
      },
      onSaved: (r) => log.push(`saved ${r}`),
      setSaving: (s) => log.push(`saving ${s}`),
      setError: (e) => log.push(`error ${e}`),
      setNotice: (n) => log.push(`notice ${n}`),
    },
  };
}

describe('runDraftSave', () => {
  it('does nothing without a draft', async () => {
    const { log, steps } = recorder(async (u) => u);
    await runDraftSave(null, steps);
    expect(log).toEqual([]);
  });

  it('shows the problems and sends nothing when the draft fails its check', async () => {
    const { log, steps } = recorder(async (u) => u);
    await runDraftSave({ n: 'x' }, steps);
    expect(log).toEqual(['error Not a whole number. Try again.']);
  });

  it('sends the update, takes what was saved and says Saved.', async () => {
    const { log, steps } = recorder(async (u) => u * 2);
    await runDraftSave({ n: '4' }, steps);
    expect(log).toEqual(['saving true', 'error null', 'put 4', 'saved 8', 'notice Saved.', 'saving false']);
  });

  it('shows the plain-words detail when the save failed, and takes nothing', async () => {
    const { log, steps } = recorder(async () => {
      throw new Error(JSON.stringify({ error: 'bad_settings', detail: 'The number is too large.' }));
    });
    await runDraftSave({ n: '4' }, steps);
    expect(log).toEqual(['saving true', 'error null', 'put 4', 'error The number is too large.', 'saving false']);
  });
});
