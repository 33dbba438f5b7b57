import { describe, expect, it } from 'vitest';
import { KiokuBuilder } from '../../src/index.js';
import { alice, scriptedJsonModel, seed, world } from './harness.js';

describe('kioku.passes.dream: the builder’s model runs the passes over the wired stores', () => {
  it('applies with the builder’s model, keeps the changeset, and refuses without a model', async () => {
    const { stores, clock } = world();
    const [a, b] = await seed(stores, clock, alice, ['Likes tea', 'Likes green tea']);
    const model = scriptedJsonModel([
      {
        merges: [
          {
            sourceIds: [a!.id, b!.id],
            content: 'Likes green tea',
            category: 'user-preferences/drinks',
            tags: ['tea'],
            reason: 'duplicates',
          },
        ],
      },
    ]);
    const kioku = new KiokuBuilder({ stores, model, clock }).build();
    const result = await kioku.passes.dream({ scope: alice, preferences: { enabled: false } });
    expect(result.passes[0]!.error).toBeUndefined();
    const facts = await stores.facts.list(alice);
    expect(facts.map((f) => f.content)).toEqual(['Likes green tea']);
    expect(facts[0]!.createdAt).toBe(a!.createdAt); // the earliest source's
    expect(model.prompts).toHaveLength(1);

    const noModel = new KiokuBuilder({ stores }).build();
    await expect(noModel.passes.dream({ scope: alice })).rejects.toThrow(/needs a model/);
  });
});
