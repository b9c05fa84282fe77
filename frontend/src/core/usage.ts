// Token and cost totals over a record's `usage` list. Absence is not zero: an entry whose provider
// did not report tokens (or whose price is unknown) is counted as unknown, never as 0; a total is
// the sum of what is known plus how many entries are unknown, so one unreported turn does not make
// the whole lesson's total unknown forever.

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
  /** Sums of the known values; null only when entries exist and none reports it. */
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  requests: number;
  /** Entries whose tokens (either side) were not reported. */
  unknownTokens: number;
  /** Entries whose cost is unknown. */
  unknownCost: number;
}

function known(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** The sum of the known values; null when there are values and none is known. */
function sumKnown(values: unknown[]): number | null {
  let total = 0;
  let any = values.length === 0;
  for (const v of values) {
    if (!known(v)) continue;
    total += v;
    any = true;
  }
  return any ? total : null;
}

export function usageTotals(entries: readonly UsageEntry[]): UsageTotals {
  return {
    entries: entries.length,
    inputTokens: sumKnown(entries.map((e) => e.inputTokens)),
    outputTokens: sumKnown(entries.map((e) => e.outputTokens)),
    costUsd: sumKnown(entries.map((e) => e.costUsd)),
    requests: entries.reduce((n, e) => n + (known(e.requests) ? e.requests : 0), 0),
    unknownTokens: entries.filter((e) => !known(e.inputTokens) || !known(e.outputTokens)).length,
    unknownCost: entries.filter((e) => !known(e.costUsd)).length,
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

/**
 * "1,234 in / 567 out tokens · $0.0031", and when some entries are unknown, what is known with
 * how many are not: "1,234 in / 567 out tokens (1 of 3 runs not reported) · $0.0031 + unknown".
 */
export function formatUsage(t: UsageTotals): string {
  const tokensNote = t.unknownTokens && t.unknownTokens < t.entries ? ` (${t.unknownTokens} of ${t.entries} runs not reported)` : '';
  const cost = t.unknownCost && t.unknownCost < t.entries && t.costUsd !== null ? `${formatCost(t.costUsd)} + unknown` : formatCost(t.costUsd);
  return `${formatTokens(t)} tokens${tokensNote} · ${cost}`;
}

/** One turn's usage: the assistant message it produced and its runs' totals. */
export interface TurnUsageLine {
  messageId: string;
  /** 1-based, in the order the turns were recorded. */
  turn: number;
  /** The roles that ran ("prober", "teacher"), in order, each once. */
  roles: string[];
  /** The models that ran, each once. */
  models: string[];
  totals: UsageTotals;
}

/**
 * The lesson's usage per turn (entries grouped by the message they belong to, in recorded
 * order): the header's detail on demand, instead of a line under every message.
 */
export function usageByTurn(entries: readonly UsageEntry[]): TurnUsageLine[] {
  const order: string[] = [];
  const groups = new Map<string, UsageEntry[]>();
  for (const e of entries) {
    const group = groups.get(e.messageId);
    if (group) group.push(e);
    else {
      groups.set(e.messageId, [e]);
      order.push(e.messageId);
    }
  }
  return order.map((messageId, i) => {
    const group = groups.get(messageId) ?? [];
    return {
      messageId,
      turn: i + 1,
      roles: [...new Set(group.map((e) => e.role))],
      models: [...new Set(group.map((e) => e.model))],
      totals: usageTotals(group),
    };
  });
}
