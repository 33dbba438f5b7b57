import { describe, expect, it } from 'vitest';
import { KiokuBuilder, type KiokuStores } from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { EnrichmentOutbox } from '../../src/memory/enrichment/outbox.js';
import type { ManualClock } from '../../src/testing.js';
import { answer, callTools, scriptedModel } from '../features/memory-features.harness.js';
import { alice, bob, contentOf, scriptedJsonModel, unreachableWhile, world } from './harness.js';

const RAW = 'user likes metric units and is in chicago';
const ENTRIES = {
  entries: [
    { content: 'User prefers metric units', category: 'user-preferences/units', tags: ['units'] },
    { content: 'User lives in Chicago', category: 'personal/home', tags: ['city'] },
  ],
};

/** A process that saves a memory and dies before its background queue runs the enrichment. */
async function saveAndDie(stores: KiokuStores, clock: ManualClock, scope = alice, content = RAW) {
  const model = scriptedJsonModel([]);
  const dying = new KiokuBuilder({
    stores,
    model,
    clock,
    // The queue never runs a job: as if the process stopped right after the reply.
    background: { guard: () => new Promise<never>(() => undefined) },
  })
    .withFacts({ mode: 'recall' })
    .build();
  const convo = await dying.startConversation(scope);
  await convo.run(
    'remember this',
    scriptedModel([callTools(['save_memory', { content }]), answer('Saved.')]),
  );
  expect(model.prompts).toHaveLength(0);
  const [original] = await contentOf(stores, scope);
  expect(original?.content).toBe(content);
  return original!;
}

function instance(stores: KiokuStores, clock: ManualClock, replies: unknown[]) {
  const model = scriptedJsonModel(replies);
  const kioku = new KiokuBuilder({ stores, model, clock }).withFacts({ mode: 'recall' }).build();
  return { kioku, model };
}

describe("save_memory's enrichment outbox", () => {
  it('a request survives a process that stops before running it: a new instance picks it up at start', async () => {
    const { stores, clock } = world();
    const original = await saveAndDie(stores, clock);
    const outbox = new EnrichmentOutbox({ stores, model: scriptedJsonModel([]) });
    expect(await outbox.pending(alice)).toEqual([{ factId: original.id, version: original.version }]);
    // Listed for workers in the same append that stored it.
    expect(await outbox.index.users()).toEqual([alice]);

    const next = instance(stores, clock, [ENTRIES]);
    await next.kioku.flush(); // waits for the recovery run at start
    expect(next.model.prompts).toHaveLength(1);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(
      ENTRIES.entries.map((e) => e.content),
    );
    expect(await outbox.pending(alice)).toEqual([]);
    expect(await outbox.index.users()).toEqual([]);
    // Reviewable and reversible as before: the kept changeset brings the original back.
    const log = new ChangesetLog(stores.sessions);
    const [kept] = await log.list(alice);
    expect(kept!.changeset).toMatchObject({ pass: 'enrichment', status: 'applied' });
    await log.revert(stores.facts, alice, kept!.changeset.id);
    expect((await contentOf(stores, alice)).map((f) => [f.id, f.content])).toEqual([[original.id, RAW]]);
  });

  it('runPending (what kioku worker runs) enriches it once with two drainers at once', async () => {
    const { stores, clock } = world();
    await saveAndDie(stores, clock);
    const one = instance(stores, clock, [ENTRIES]);
    const two = instance(stores, clock, [ENTRIES]);
    await Promise.all([one.kioku.runPending(), two.kioku.runPending(), one.kioku.flush(), two.kioku.flush()]);
    await Promise.all([one.kioku.runPending(), two.kioku.runPending()]);
    expect(one.model.prompts.length + two.model.prompts.length).toBe(1);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(
      ENTRIES.entries.map((e) => e.content),
    );
    expect(await new ChangesetLog(stores.sessions).list(alice)).toHaveLength(1);
  });

  it("stays the user's: another user's drain neither runs nor sees it", async () => {
    const { stores, clock } = world();
    const original = await saveAndDie(stores, clock, alice);
    const { kioku, model } = instance(stores, clock, [ENTRIES]);
    await kioku.flush();
    expect(model.prompts).toHaveLength(1); // the recovery at start ran alice's
    const late = await saveAndDie(stores, clock, bob, 'bob collects stamps');
    const other = instance(stores, clock, []);
    await other.kioku.close();
    const report = await other.kioku.runPending({ users: ['alice'] });
    expect(report.users).toMatchObject([{ userId: 'alice', status: 'done', passes: 0 }]);
    expect(await contentOf(stores, bob)).toEqual([late]);
    const outbox = new EnrichmentOutbox({ stores, model: scriptedJsonModel([]) });
    expect(await outbox.pending(bob)).toEqual([{ factId: late.id, version: late.version }]);
    expect(await outbox.pending(alice)).toEqual([]);
    expect(await stores.facts.get(bob, original.id)).toBeNull();
    expect(await new ChangesetLog(stores.sessions).list(bob)).toEqual([]);
  });

  it('a memory edited before the drain is kept as edited, without a model call', async () => {
    const { stores, clock } = world();
    const original = await saveAndDie(stores, clock);
    await stores.facts.update(alice, original.id, { content: 'User likes metric units (edited)' });
    const { kioku, model } = instance(stores, clock, [ENTRIES]);
    await kioku.flush();
    expect(model.prompts).toHaveLength(0);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual([
      'User likes metric units (edited)',
    ]);
    expect(await new EnrichmentOutbox({ stores, model }).pending(alice)).toEqual([]);
  });

  it('a failing model leaves the request pending, tried again, and skipped after three failures', async () => {
    const { stores, clock } = world();
    const original = await saveAndDie(stores, clock);
    const outbox = new EnrichmentOutbox({ stores, model: scriptedJsonModel([]) });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const { sessions } = await outbox.drainUser(alice);
      expect(sessions[0]).toMatchObject({ failed: 1, skipped: attempt === 3 ? 1 : 0 });
    }
    expect(await outbox.pending(alice)).toEqual([]);
    expect(await contentOf(stores, alice)).toEqual([original]);
  });

  it('a store that is unreachable costs the request no attempt: it is never skipped, and runs once it is back', async () => {
    const { stores, clock } = world();
    await saveAndDie(stores, clock);
    let down = true;
    const facts = unreachableWhile(stores.facts, () => down);
    const outbox = new EnrichmentOutbox({
      stores: { ...stores, facts },
      model: scriptedJsonModel([ENTRIES]),
    });
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { sessions } = await outbox.drainUser(alice);
      expect(sessions[0], `attempt ${attempt}`).toMatchObject({ failed: 1, skipped: 0, left: 1 });
    }
    down = false;
    await outbox.drainUser(alice);
    expect(await outbox.pending(alice)).toEqual([]);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(
      ENTRIES.entries.map((e) => e.content),
    );
  });
});
