import { describe, expect, it } from 'vitest';
import { KiokuBuilder } from '../../src/index.js';
import { DREAM_LEASE, MEMORY_WORK_LEASE, waitForLease } from '../../src/memory/background/memory-lease.js';
import { acquireLease, readLease } from '../../src/runtime/lease.js';
import { alice, bob, scriptedJsonModel, seed, world } from './harness.js';

/** Two app instances: two Kioku stacks over one set of stores (as over one PostgreSQL or Redis). */
describe('background work from several app instances', () => {
  it("runs each background job holding the user's memory-work lease (the builder's default guard)", async () => {
    const { stores, clock } = world();
    const kioku = new KiokuBuilder({ stores, clock }).build();
    let seen: Awaited<ReturnType<typeof readLease>> = null;
    kioku.background.enqueue({
      kind: 'probe',
      scope: alice,
      run: async () => {
        seen = await readLease(stores.working, alice, MEMORY_WORK_LEASE);
        return undefined;
      },
    });
    await kioku.flush();
    expect(seen).not.toBeNull();
    // Released once the job is done; another user's work never needed it.
    expect(await readLease(stores.working, alice, MEMORY_WORK_LEASE)).toBeNull();
    expect(await readLease(stores.working, bob, MEMORY_WORK_LEASE)).toBeNull();
  });

  it("one instance's jobs wait while another instance writes the same user's memory, then run", async () => {
    const { stores, clock } = world();
    const other = await acquireLease(stores.working, alice, MEMORY_WORK_LEASE, { ttlMs: 60_000, clock });
    expect(other).not.toBeNull();
    const events: string[] = [];
    const kioku = new KiokuBuilder({
      stores,
      clock,
      background: { onEvent: (e) => events.push(e.type) },
    }).build();
    let ran = false;
    kioku.background.enqueue({
      kind: 'probe',
      scope: alice,
      run: async () => {
        ran = true;
        return undefined;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(ran).toBe(false); // still waiting for the other instance
    await other!.release();
    await kioku.flush();
    expect(ran).toBe(true);
    expect(events).toContain('done');
  });

  it('waiting gives up with CONFLICT naming the holder when the other instance does not finish in time', async () => {
    const { stores, clock } = world();
    await acquireLease(stores.working, alice, MEMORY_WORK_LEASE, {
      ttlMs: 60_000,
      holder: 'instance-2',
      clock,
    });
    await expect(
      waitForLease(stores.working, alice, MEMORY_WORK_LEASE, async () => 'never', {
        clock,
        waitMs: 50,
        pollMs: 10,
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/instance-2/) });
  });

  it('a second dream of the same user answers busy and changes nothing', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['Likes tea', 'Likes green tea']);
    const before = await stores.facts.list(alice);
    await acquireLease(stores.working, alice, DREAM_LEASE, { ttlMs: 60_000, holder: 'instance-2', clock });
    const model = scriptedJsonModel([]);
    const kioku = new KiokuBuilder({ stores, model, clock }).build();
    const result = await kioku.passes.dream({ scope: alice });
    expect(result.busy).toEqual({ holder: 'instance-2', expiresAt: expect.any(String) });
    expect(result.passes).toEqual([]);
    expect(model.prompts).toEqual([]);
    expect(await stores.facts.list(alice)).toEqual(before);
    // Another user's dream is not held up.
    expect((await kioku.passes.dream({ scope: bob, preferences: { enabled: false } })).busy).toBeUndefined();
  });
});
