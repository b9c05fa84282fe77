// Token and cost totals over a record's `usage` list. Absence is not zero: a
// total with any unknown entry is unknown (null), never shown as 0.

export interface UsageEntry {
  messageId: string;
  role: string;
  provider: string;
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  requests: number;
  costUsd: number | null;
  at: string;
}

export interface UsageTotals {
  /** Number of entries summed. */
  entries: number;
  /** null = unknown (some entry did not report it). */
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  requests: number;
}

function known(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function sumOrNull(values: unknown[]): number | null {
  let total = 0;
  for (const v of values) {
    if (!known(v)) return null;
    total += v;
  }
  return total;
}

export function usageTotals(entries: readonly UsageEntry[]): UsageTotals {
  return {
    entries: entries.length,
    inputTokens: sumOrNull(entries.map((e) => e.inputTokens)),
    outputTokens: sumOrNull(entries.map((e) => e.outputTokens)),
    costUsd: sumOrNull(entries.map((e) => e.costUsd)),
    requests: entries.reduce((n, e) => n + (known(e.requests) ? e.requests : 0), 0),
  };
}

/** Totals of one assistant message's entries, or null when it has none. */
export function messageUsage(entries: readonly UsageEntry[] | null | undefined, messageId: string): UsageTotals | null {
  const mine = (entries ?? []).filter((e) => e.messageId === messageId);
  return mine.length ? usageTotals(mine) : null;
}

/** Defensive read of a record's `usage` (drops anything that is not an entry object). */
export function normalizeUsage(raw: unknown): UsageEntry[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (e): e is UsageEntry => typeof e === 'object' && e !== null && typeof (e as { messageId?: unknown }).messageId === 'string',
  );
}

// ---------------------------------------------------------------------------
// Formatting

/** 1234 -> "1,234" (locale-independent). */
export function formatCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** "1,234 in / 567 out", with "unknown" for an unknown side. */
export function formatTokens(t: Pick<UsageTotals, 'inputTokens' | 'outputTokens'>): string {
  const side = (n: number | null) => (n === null ? 'unknown' : formatCount(n));
  return `${side(t.inputTokens)} in / ${side(t.outputTokens)} out`;
}

/**
 * "$0.0031", "$1.25", "cost unknown". Small amounts keep two significant
 * digits so they do not round to $0.00.
 */
export function formatCost(costUsd: number | null): string {
  if (costUsd === null || !Number.isFinite(costUsd)) return 'cost unknown';
  if (costUsd === 0) return '$0.00';
  if (costUsd >= 0.01) return `$${costUsd.toFixed(2)}`;
  const digits = Math.min(8, Math.max(4, 1 - Math.floor(Math.log10(costUsd))));
  return `$${costUsd.toFixed(digits)}`;
}

/** "1,234 in / 567 out · $0.0031" */
export function formatUsage(t: UsageTotals): string {
  return `${formatTokens(t)} tokens · ${formatCost(t.costUsd)}`;
}
