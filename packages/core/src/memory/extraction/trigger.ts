/** When a session's new turns are extracted: whichever of these comes first. */
export interface ExtractionTrigger {
  /** New user turns in a session (default 8). */
  turns?: number;
  /** Tokens (o200k) of those turns' user messages and answers (default 2000). */
  tokens?: number;
  /** Quiet time after the session's last turn, in ms (default 60 s); `false`: only the others. */
  idleMs?: number | false;
}

/**
 * The defaults. 8 turns, one pass of the outbox (`OUTBOX_DEFAULTS.turnsPerPass`): measured by `pnpm
 * bench:lifecycle` (its outbox rows), LoCoMo costs 0.144 memory-model calls per user turn so, against 0.267
 * with 4 turns (a session's last turns are a short pass of their own, above the ≤ 0.25 asked); a fact said
 * in a turn is in memory at most 8 turns later, and the conversation's history (20 turns replayed by
 * default) carries it meanwhile. 2000 tokens: a few long turns (a pasted text) start it sooner, which keeps
 * the prompt of one pass small. 60 s: a conversation quiet for a minute has its last turns extracted
 * without waiting for more.
 */
export const EXTRACTION_TRIGGER_DEFAULTS = Object.freeze({ turns: 8, tokens: 2000, idleMs: 60_000 });

export function resolveTrigger(trigger: ExtractionTrigger = {}): Required<ExtractionTrigger> {
  const out = { ...EXTRACTION_TRIGGER_DEFAULTS, ...trigger };
  for (const name of ['turns', 'tokens'] as const) {
    if (!Number.isInteger(out[name]) || out[name] < 1)
      throw new RangeError(`trigger.${name} must be a positive integer.`);
  }
  if (out.idleMs !== false && (!Number.isInteger(out.idleMs) || out.idleMs < 1)) {
    throw new RangeError('trigger.idleMs must be a positive integer or false.');
  }
  return out;
}
