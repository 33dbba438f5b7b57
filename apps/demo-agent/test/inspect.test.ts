import type { TurnLedger } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { formatLedger, ledgerLine } from '../src/inspect.js';

describe('/ledger', () => {
  const ledger: TurnLedger = {
    maxTokens: 16_000,
    baseTokens: 40,
    tools: { definitions: 12, tokens: 2_300 },
    recall: {
      recall: true,
      mode: 'always',
      by: 'setting',
      reason: "Recall runs on every turn (recall: 'always').",
    },
    entries: [
      {
        middleware: 'facts',
        allottedTokens: 2_000,
        tokens: 1_990,
        included: 60,
        dropped: [
          { id: 'older', reason: 'budget', count: 4_864 },
          { id: 'f1', reason: 'budget' },
          { id: 'f2', reason: 'already-injected' },
        ],
      },
    ],
    totalTokens: 4_330,
    tokenizer: 'o200k_base',
  };

  it('prints the items dropped and why (a group entry counts as its items), and the tool definitions', () => {
    const text = formatLedger(ledger);
    expect(text).toContain('dropped: 4,865 budget, 1 already-injected');
    expect(text).toMatch(/tool definitions +2300 tokens {2}12 tools/);
    expect(text).not.toMatch(/\b3 dropped\b/);
  });

  it('prints the recall decision: who decided, why, a fallback, and a skipped middleware', () => {
    const skipped: TurnLedger = {
      ...ledger,
      recall: {
        recall: false,
        mode: 'auto',
        by: 'deterministic',
        intent: 'concrete',
        reason: 'Concrete: the message carries the material it is about.',
        fallback: { from: 'model', code: 'TIMEOUT', message: 'late' },
        forcedBy: { tool: 'search_memory' },
      },
      entries: [
        {
          middleware: 'fact-recall',
          allottedTokens: 9_000,
          tokens: 0,
          included: 0,
          dropped: [{ id: 'recall', reason: 'not-needed' }],
          notes: ['skipped: Concrete: the message carries the material it is about.'],
        },
      ],
    };
    const text = formatLedger(skipped);
    expect(text.split('\n')[0]).toBe(
      '  recall skipped (auto, deterministic; model failed: TIMEOUT): Concrete: the message carries the material it is about. — the model searched memory itself (search_memory)',
    );
    expect(text).toMatch(/fact-recall +0 tokens {2}0 included, dropped: 1 not-needed — skipped: Concrete/);
    expect(formatLedger(ledger).split('\n')[0]).toBe(
      "  recall ran (always, setting): Recall runs on every turn (recall: 'always').",
    );
    expect(ledgerLine(skipped)).toMatch(/recall skipped$/);
  });
});
