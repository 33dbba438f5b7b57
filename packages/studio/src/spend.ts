import type { KeptChangeset } from './kioku.js';

/** What the memory model spent on one day in one pass, as the kept changesets record it. */
export interface DailySpend {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  pass: string;
  /** Changesets that carry usage (one per pass run that called the model and kept its result). */
  runs: number;
  inputTokens: number;
  outputTokens: number;
  /** True when any of them was counted by Kioku because the model reported no usage. */
  estimated: boolean;
}

/**
 * The memory model's spend per day and pass: the usage each kept changeset records (extraction,
 * enrichment, the dream's passes, knowledge), newest day first. Runs whose changesets were not kept
 * (nothing to change, or a dry run not kept) are not in it: this is what the store remembers, not a bill.
 */
export function spendPerDay(kept: readonly KeptChangeset[]): DailySpend[] {
  const byKey = new Map<string, DailySpend>();
  for (const { changeset } of kept) {
    const usage = changeset.usage;
    if (!usage) continue;
    const day = changeset.createdAt.slice(0, 10);
    const key = `${day}\u0000${changeset.pass}`;
    const row = byKey.get(key) ?? {
      day,
      pass: changeset.pass,
      runs: 0,
      inputTokens: 0,
      outputTokens: 0,
      estimated: false,
    };
    row.runs++;
    row.inputTokens += usage.inputTokens;
    row.outputTokens += usage.outputTokens;
    row.estimated ||= usage.estimated === true;
    byKey.set(key, row);
  }
  return [...byKey.values()].sort((a, b) => b.day.localeCompare(a.day) || a.pass.localeCompare(b.pass));
}
