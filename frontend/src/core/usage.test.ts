import { describe, expect, it } from 'vitest';
import { formatCost, formatCount, formatTokens, formatUsage, messageUsage, normalizeUsage, usageByTurn, usageTotals, type UsageEntry } from './usage';

function entry(partial: Partial<UsageEntry> = {}): UsageEntry {
  return {
    messageId: 'm1',
    role: 'teacher',
    provider: 'openrouter',
    model: 'x',
    inputTokens: 1000,
    outputTokens: 200,
    requests: 1,
    costUsd: 0.001,
    at: '2026-01-01T00:00:00Z',
    ...partial,
  };
}

describe('usageTotals', () => {
  it('sums known values', () => {
    const t = usageTotals([entry(), entry({ inputTokens: 234, outputTokens: 367, costUsd: 0.0021, requests: 2 })]);
    expect(t.inputTokens).toBe(1234);
    expect(t.outputTokens).toBe(567);
    expect(t.costUsd).toBeCloseTo(0.0031, 10);
    expect(t.requests).toBe(3);
    expect(formatTokens(t)).toBe('1,234 in / 567 out');
    expect(formatCost(t.costUsd)).toBe('$0.0031');
  });

  it('sums what is known and counts what is not: one unknown run never makes the total unknown', () => {
    const t = usageTotals([entry(), entry({ costUsd: null, outputTokens: null })]);
    expect(t.inputTokens).toBe(2000);
    expect(t.outputTokens).toBe(200);
    expect(t.costUsd).toBeCloseTo(0.001, 10);
    expect(t.unknownTokens).toBe(1);
    expect(t.unknownCost).toBe(1);
    expect(formatUsage(t)).toBe('2,000 in / 200 out tokens (1 of 2 runs not reported) · $0.0010 + unknown');
  });

  it('is unknown (null), never 0, when no entry reports it', () => {
    const t = usageTotals([entry({ inputTokens: null, outputTokens: null, costUsd: null })]);
    expect(t.inputTokens).toBeNull();
    expect(t.costUsd).toBeNull();
    expect(formatTokens(t)).toBe('unknown in / unknown out');
    expect(formatUsage(t)).toBe('unknown in / unknown out tokens · cost unknown');
  });

  it('totals of nothing are zero', () => {
    expect(usageTotals([])).toEqual({
      entries: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      requests: 0,
      unknownTokens: 0,
      unknownCost: 0,
    });
  });
});

describe('messageUsage', () => {
  it('sums one message, null without entries', () => {
    const list = [entry(), entry({ messageId: 'm2', inputTokens: 5 }), entry({ role: 'prober' })];
    expect(messageUsage(list, 'm1')?.inputTokens).toBe(2000);
    expect(messageUsage(list, 'm2')?.inputTokens).toBe(5);
    expect(messageUsage(list, 'nope')).toBeNull();
    expect(messageUsage(undefined, 'm1')).toBeNull();
  });
});

describe('formatting', () => {
  it('formats counts and costs', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCost(1.254)).toBe('$1.25');
    expect(formatCost(0.05)).toBe('$0.05');
    expect(formatCost(0.00031)).toBe('$0.00031');
    expect(formatCost(0)).toBe('$0.00');
    expect(formatCost(null)).toBe('cost unknown');
  });

  it('normalizes junk', () => {
    expect(normalizeUsage(null)).toEqual([]);
    expect(normalizeUsage([1, { messageId: 'x' }])).toEqual([{ messageId: 'x' }]);
  });
});

describe('usage by turn (the header detail, issue 18)', () => {
  const entry = (messageId: string, role: string, inputTokens: number | null, costUsd: number | null): UsageEntry => ({
    messageId,
    role,
    provider: 'openai',
    model: 'gpt-5-mini',
    inputTokens,
    outputTokens: inputTokens === null ? null : 5,
    requests: 1,
    costUsd,
    at: '2026-12-01T00:00:00Z',
  });

  it('groups the runs of one reply into one turn, in recorded order', () => {
    const lines = usageByTurn([entry('a1', 'prober', 10, 0.001), entry('a2', 'prober', 20, null), entry('a2', 'teacher', 30, 0.002)]);
    expect(lines.map((l) => [l.turn, l.messageId, l.roles])).toEqual([
      [1, 'a1', ['prober']],
      [2, 'a2', ['prober', 'teacher']],
    ]);
    expect(lines[1].totals).toMatchObject({ entries: 2, inputTokens: 50, requests: 2, unknownCost: 1 });
    expect(usageByTurn([])).toEqual([]);
  });
});
