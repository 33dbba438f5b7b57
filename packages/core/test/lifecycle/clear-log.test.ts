import { describe, expect, it } from 'vitest';
import { dream } from '../../src/memory/dream/dream.js';
import { alice, scriptedJsonModel, seed, world } from './harness.js';

describe('the conversation log is cleared after the preference pass, whatever happened before', () => {
  it('is cleared when consolidation threw an error that is not Kioku’s (the error still surfaces)', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['A fact']);
    const crashing = {
      async complete(): Promise<never> {
        throw new Error('connection reset');
      },
    };
    let cleared = 0;
    await expect(
      dream({
        stores,
        model: scriptedJsonModel([{ preferences: [] }]),
        scope: alice,
        log: [{ text: 'Metric please.' }],
        clock,
        consolidation: { model: crashing },
        clearLog: () => {
          cleared++;
        },
      }),
    ).rejects.toThrow('connection reset');
    expect(cleared).toBe(1);
  });
});
