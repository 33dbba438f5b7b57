import { describe, expect, it } from 'vitest';
import { type ChatModel, KiokuBuilder } from '../../src/index.js';
import { RecallLog } from '../../src/memory/limits/recall-log.js';
import { alice, scriptedJsonModel, seed, world } from './harness.js';

/** A chat model that answers every turn with the same text and no tool calls. */
const answers: ChatModel = {
  async complete() {
    return { role: 'assistant', content: 'Noted.' };
  },
};

describe('withFactLimits: the cap after a turn, recalls as uses, decay in the dream', () => {
  it('notes the facts each turn showed the model, as uses', async () => {
    const { stores, clock } = world();
    const facts = await seed(stores, clock, alice, ['Likes green tea', 'Lives in Lisbon', 'Has a cat']);
    const kioku = new KiokuBuilder({ stores, clock }).withFacts().withFactLimits({ maxFacts: 100 }).build();
    const conversation = await kioku.startConversation(alice);
    await conversation.run('What do you remember about me?', answers);
    const stats = await new RecallLog(stores.sessions).stats(alice);
    expect([...stats.keys()].sort()).toEqual(facts.map((f) => f.id).sort());
  });

  it('past the cap, a turn queues the eviction: the least recently used go, pinned facts stay, revertible', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, [
      { content: 'Oldest, pinned', metadata: { pinned: true } as never },
      'Second oldest',
      'Third oldest',
      'Newest',
    ]);
    const kioku = new KiokuBuilder({ stores, clock }).withFactLimits({ maxFacts: 2 }).build();
    const conversation = await kioku.startConversation(alice);
    await conversation.run('hello', answers);
    await kioku.flush();
    const left = (await stores.facts.list(alice)).map((f) => f.content);
    expect(left).toEqual(['Oldest, pinned', 'Newest']);
    const [kept] = await kioku.passes.changesets(alice);
    expect(kept?.changeset.pass).toBe('eviction');
    await kioku.passes.revert(alice, kept!.changeset.id);
    expect(await stores.facts.count(alice)).toBe(4);
  });

  it('the dream applies the limits last, decay included; a dry run does not', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['Old fact one', 'Old fact two']);
    const model = scriptedJsonModel([{}, {}]);
    const kioku = new KiokuBuilder({ stores, model, clock })
      .withFactLimits({ maxFacts: 100, forgetUnusedAfterDays: 7 })
      .build();
    const dry = await kioku.passes.dream({ scope: alice, dryRun: true, preferences: { enabled: false } });
    expect(dry.passes.map((p) => p.pass)).toEqual(['consolidation']);
    expect(await stores.facts.count(alice)).toBe(2);

    const result = await kioku.passes.dream({ scope: alice, preferences: { enabled: false } });
    const eviction = result.passes.find((p) => p.pass === 'eviction');
    expect(eviction?.changeset?.operations).toHaveLength(2);
    expect(await stores.facts.count(alice)).toBe(0);
  });

  it('refuses limits that make no sense when wired, and enforcing without limits', async () => {
    const { stores } = world();
    expect(() => new KiokuBuilder({ stores }).withFactLimits({ maxFacts: -1 })).toThrow(
      /withFactLimits: maxFacts is invalid/,
    );
    await expect(new KiokuBuilder({ stores }).build().passes.enforceFactLimits(alice)).rejects.toMatchObject({
      code: 'VALIDATION',
    });
  });
});
