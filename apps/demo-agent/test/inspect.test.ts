import type { TurnLedger } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { formatLedger } from '../src/inspect.js';

describe('/ledger', () => {
  const ledger: TurnLedger = {
    maxTokens: 16_000,
    baseTokens: 40,
    tools: { definitions: 12, tokens: 2_300 },
    entries: [
      {
        middleware: 'dynamic-memory',
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
});
