import { describe, expect, it } from 'vitest';
import {
  type BackgroundEvent,
  type Fact,
  KiokuBuilder,
  type KiokuStores,
  type Scope,
  StorageError,
} from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { ExtractionOutbox } from '../../src/memory/extraction/outbox.js';
import { PendingIndex } from '../../src/memory/extraction/pending-index.js';
import type { ExtractionTrigger } from '../../src/memory/extraction/trigger.js';
import { forgetUser } from '../../src/memory/forget/forget-user.js';
import { type ManualClock, ScriptedModel } from '../../src/testing.js';
import { alice, bob, gate, unreachableWhile, world } from './harness.js';
import { echoMemoryModel, SAYINGS } from './outbox.harness.js';

const replies = () => new ScriptedModel(Array.from({ length: 50 }, () => 'Noted.'));

async function factsOf(stores: KiokuStores, scope: Scope): Promise<Fact[]> {
  return stores.facts.list(scope, { order: 'oldest' });
}

function build(
  { stores, clock }: { stores: KiokuStores; clock: ManualClock },
  model: ReturnType<typeof echoMemoryModel>,
  options: {
    trigger?: ExtractionTrigger;
    recover?: boolean;
    events?: BackgroundEvent[];
  } = {},
) {
  return new KiokuBuilder({
    stores,
    model,
    clock,
    ...(options.events ? { background: { onEvent: (e: BackgroundEvent) => options.events!.push(e) } } : {}),
  })
    .withExtraction({
      trigger: { idleMs: false, ...options.trigger },
      ...(options.recover !== undefined ? { recover: options.recover } : {}),
    })
    .build();
}

describe('extraction through the outbox', () => {
  it('waits for 8 new turns by default, then extracts them all, each once, named by its turn', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const kioku = build(w, model, { trigger: {} });
    const convo = await kioku.startConversation(alice);
    const chat = replies();
    for (const saying of SAYINGS.slice(0, 7)) await convo.run(saying, chat);
    expect(kioku.background.stats.queued).toBe(0);
    await convo.run(SAYINGS[7]!, chat);
    expect(kioku.background.stats.queued).toBe(1);
    await kioku.background.flush();
    const facts = await factsOf(stores, alice);
    expect(facts.map((f) => [f.content, f.provenance.turn]).sort()).toEqual(
      SAYINGS.slice(0, 8)
        .map((s, i) => [s, i])
        .sort(),
    );
    expect(model.exchanges).toEqual(SAYINGS.slice(0, 8));
    // The eight turns cost one memory-model call.
    expect(model.calls).toBe(1);
    const outbox = new ExtractionOutbox({ stores, model });
    expect(await outbox.pending(alice, convo.sessionId)).toEqual([]);
    expect(await new PendingIndex(stores.sessions).users()).toEqual([]);
  });

  it('flush and close extract the turns still waiting for their trigger', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const kioku = build(w, model, { trigger: { turns: 10 } });
    const convo = await kioku.startConversation(alice);
    await convo.run(SAYINGS[0]!, replies());
    await kioku.flush();
    expect((await factsOf(stores, alice)).map((f) => f.content)).toEqual([SAYINGS[0]]);
    await convo.run(SAYINGS[1]!, replies());
    await kioku.close();
    expect((await factsOf(stores, alice)).map((f) => f.content).sort()).toEqual(
      [SAYINGS[0], SAYINGS[1]].sort(),
    );
  });

  it('a process that dies before extracting leaves the turns to another; the late pass is discarded', async () => {
    const w = world();
    const { stores, clock } = w;
    const dying = echoMemoryModel();
    const stuck = gate();
    dying.hold = stuck.promise;
    const first = build(w, dying, { trigger: { turns: 1 } });
    const convo = await first.startConversation(alice);
    const chat = replies();
    for (const saying of SAYINGS.slice(0, 3)) await convo.run(saying, chat);
    expect(await factsOf(stores, alice)).toEqual([]);

    // Another instance (a worker) finds the user busy while the lease lives, and does the work once it expired.
    const model = echoMemoryModel();
    const worker = build(w, model, { recover: false });
    const busy = await worker.runPending();
    expect(busy.users).toMatchObject([{ userId: 'alice', status: 'busy' }]);
    clock.advance(121_000);
    const report = await worker.runPending();
    expect(report).toMatchObject({ complete: true, users: [{ userId: 'alice', status: 'done', turns: 3 }] });
    expect(model.exchanges).toEqual(SAYINGS.slice(0, 3));

    // The first instance's pass, still running, finishes late: it loses the race and writes nothing.
    stuck.open();
    await first.flush();
    const facts = await factsOf(stores, alice);
    expect(facts.map((f) => f.content).sort()).toEqual(SAYINGS.slice(0, 3).sort());
    expect((await new ChangesetLog(stores.sessions).list(alice)).length).toBeGreaterThan(0);
    expect((await worker.runPending()).users).toEqual([]);
  });

  it('a pass that died after writing its watermark is finished by the next drain, never repeated', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const convo = await build(w, model, { trigger: { turns: 100 } }).startConversation(alice);
    const chat = replies();
    for (const saying of SAYINGS.slice(0, 2)) await convo.run(saying, chat);

    // Dies while applying (the facts write fails), with the changeset kept but not applied.
    let failCreate = true;
    const flaky: KiokuStores = {
      ...stores,
      facts: new Proxy(stores.facts, {
        get(target, name, receiver) {
          if (name === 'create' && failCreate) {
            return async () => {
              failCreate = false;
              throw new Error('connection lost');
            };
          }
          const value = Reflect.get(target, name, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    };
    await expect(
      new ExtractionOutbox({ stores: flaky, model }).drainSession(alice, convo.sessionId),
    ).rejects.toThrow(/connection lost/);
    expect(await factsOf(stores, alice)).toEqual([]);
    const again = await new ExtractionOutbox({ stores, model }).drainSession(alice, convo.sessionId);
    expect(again.results).toHaveLength(1);
    expect((await factsOf(stores, alice)).map((f) => f.content).sort()).toEqual(SAYINGS.slice(0, 2).sort());
    expect(model.exchanges).toEqual(SAYINGS.slice(0, 2));

    // Dies before the changeset was kept: the turns are read again, once.
    await convo.run(SAYINGS[2]!, chat);
    let failKeep = true;
    const lossy: KiokuStores = {
      ...stores,
      sessions: new Proxy(stores.sessions, {
        get(target, name, receiver) {
          if (name === 'kvSet') {
            return async (...args: Parameters<typeof target.kvSet>) => {
              if (failKeep && args[2].startsWith('changeset/')) {
                failKeep = false;
                throw new Error('connection lost');
              }
              return target.kvSet(...args);
            };
          }
          const value = Reflect.get(target, name, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    };
    await expect(
      new ExtractionOutbox({ stores: lossy, model }).drainSession(alice, convo.sessionId),
    ).rejects.toThrow(/connection lost/);
    await new ExtractionOutbox({ stores, model }).drainSession(alice, convo.sessionId);
    expect((await factsOf(stores, alice)).map((f) => f.content).sort()).toEqual(SAYINGS.slice(0, 3).sort());
    expect(model.exchanges.filter((e) => e === SAYINGS[2])).toHaveLength(2); // read twice, written once
  });

  it('a turn that keeps failing is skipped after 3 attempts, so the turns after it are extracted', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const events: BackgroundEvent[] = [];
    const kioku = build(w, model, { trigger: { turns: 100 }, events });
    const convo = await kioku.startConversation(alice);
    await convo.run(SAYINGS[0]!, replies());
    const outbox = new ExtractionOutbox({ stores, model, turnsPerPass: 1 });
    const broken = {
      ...model,
      complete: async () => ({ role: 'assistant' as const, content: '{"facts": [' }),
    };
    const failing = new ExtractionOutbox({ stores, model: broken, turnsPerPass: 1 });
    for (let i = 1; i <= 2; i++) {
      const drain = await failing.drainSession(alice, convo.sessionId);
      expect(drain).toMatchObject({ failed: 1, skipped: 0, left: 1 });
    }
    expect(await failing.drainSession(alice, convo.sessionId)).toMatchObject({ failed: 1, skipped: 1 });
    await convo.run(SAYINGS[1]!, replies());
    await outbox.drainSession(alice, convo.sessionId);
    expect((await factsOf(stores, alice)).map((f) => f.content)).toEqual([SAYINGS[1]]);
  });

  it('a store that is unreachable during passes costs no attempt: its turns are never skipped', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const kioku = build(w, model, { trigger: { turns: 100 } });
    const convo = await kioku.startConversation(alice);
    await convo.run(SAYINGS[0]!, replies());
    // The facts the pass reads to place the new ones: unreachable while `down` (the model was asked).
    let down = true;
    const facts = unreachableWhile(
      stores.facts,
      () => down,
      (method) => method !== 'create',
    );
    const outbox = new ExtractionOutbox({ stores: { ...stores, facts }, model, turnsPerPass: 1 });
    for (let i = 1; i <= 4; i++) {
      const drain = await outbox.drainSession(alice, convo.sessionId);
      expect(drain, `pass ${i}`).toMatchObject({ failed: 1, skipped: 0, left: 1 });
      expect(drain.error).toBeInstanceOf(StorageError);
    }
    down = false;
    expect(await outbox.drainSession(alice, convo.sessionId)).toMatchObject({ passes: 1, skipped: 0 });
    expect((await factsOf(stores, alice)).map((f) => f.content)).toEqual([SAYINGS[0]]);
  });

  it('a pass whose facts could not be written (the store went away after the model answered) writes them later', async () => {
    const w = world();
    const { stores } = w;
    const model = echoMemoryModel();
    const kioku = build(w, model, { trigger: { turns: 100 } });
    const convo = await kioku.startConversation(alice);
    await convo.run(SAYINGS[0]!, replies());
    await convo.run(SAYINGS[1]!, replies());
    // Fact writes fail while `down`: the pass has read, asked the model and claimed its turns by then.
    let down = true;
    const facts = unreachableWhile(
      stores.facts,
      () => down,
      (method) => method === 'create',
    );
    const outbox = new ExtractionOutbox({ stores: { ...stores, facts }, model });
    const failed = await outbox.drainSession(alice, convo.sessionId).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(StorageError);
    expect(await factsOf(stores, alice)).toEqual([]);
    down = false;
    await outbox.drainSession(alice, convo.sessionId);
    expect((await factsOf(stores, alice)).map((f) => f.content).sort()).toEqual(SAYINGS.slice(0, 2).sort());
    // Asked once: the kept changeset was applied, not extracted again.
    expect(model.calls).toBe(1);
  });

  it('runPending with users checks all their sessions (also those no append marked pending) and keeps to the budget', async () => {
    const w = world();
    const model = echoMemoryModel();
    // An app without extraction appends its turns without marking the sessions pending.
    const app = new KiokuBuilder({ stores: w.stores, clock: w.clock }).build();
    for (const scope of [alice, bob]) {
      const convo = await app.startConversation(scope);
      await convo.run(SAYINGS[0]!, replies());
    }
    const worker = build(w, model, { recover: false });
    expect((await worker.runPending()).users).toEqual([]);
    const limited = await worker.runPending({ users: ['alice', 'bob'], budget: { passes: 1 } });
    expect(limited).toMatchObject({ complete: false, passes: 1 });
    expect(limited.users.map((u) => u.userId)).toEqual(['alice']);
    const rest = await worker.runPending({ users: ['alice', 'bob'] });
    expect(rest.users.map((u) => [u.userId, u.turns])).toEqual([
      ['alice', 0],
      ['bob', 1],
    ]);
    expect(model.exchanges).toEqual([SAYINGS[0], SAYINGS[0]]);
  });

  it('a new instance extracts at start what a process that died left pending', async () => {
    const w = world();
    const { stores } = w;
    const app = build(w, echoMemoryModel(), { trigger: { turns: 100 } });
    const convo = await app.startConversation(alice);
    await convo.run(SAYINGS[0]!, replies());
    const model = echoMemoryModel();
    const restarted = build(w, model);
    await restarted.flush();
    expect((await factsOf(stores, alice)).map((f) => f.content)).toEqual([SAYINGS[0]]);
  });

  it('forgetting a user takes their sessions off the pending list too', async () => {
    const w = world();
    const app = build(w, echoMemoryModel(), { trigger: { turns: 100 } });
    for (const scope of [alice, bob]) await (await app.startConversation(scope)).run(SAYINGS[0]!, replies());
    const index = new PendingIndex(w.stores.sessions);
    expect((await index.users()).map((u) => u.userId).sort()).toEqual(['alice', 'bob']);
    await forgetUser(w.stores, 'alice');
    expect((await index.users()).map((u) => u.userId)).toEqual(['bob']);
  });

  it('a long turn (the token trigger) or a quiet session (the idle trigger) starts extraction sooner', async () => {
    const w = world();
    const model = echoMemoryModel();
    const long = build(w, model, { trigger: { turns: 100, tokens: 20 } });
    await (await long.startConversation(alice)).run(`${SAYINGS[0]} ${SAYINGS[1]} ${SAYINGS[2]}`, replies());
    expect(long.background.stats.queued).toBe(1);

    const quiet = build(w, model, { trigger: { turns: 100, idleMs: 1 } });
    await (await quiet.startConversation(bob)).run(SAYINGS[3]!, replies());
    // Waits on the condition, not a count of tries: a slow machine only takes longer (the hang limit stops a real failure).
    while (quiet.background.stats.queued === 0) await new Promise((r) => setTimeout(r, 5));
    expect(quiet.background.stats.queued).toBe(1);
    await quiet.background.flush();
    expect((await factsOf(w.stores, bob)).map((f) => f.content)).toEqual([SAYINGS[3]]);
  });
});
