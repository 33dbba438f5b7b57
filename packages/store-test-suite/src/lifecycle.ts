import type { ChatMessage, ChatModel, Fact, KiokuStores, Scope } from '@kioku/core';
import { KiokuBuilder } from '@kioku/core';
import {
  ChangesetLog,
  ConversationLog,
  consolidateKnowledge,
  dream,
  EnrichmentOutbox,
  FeedbackLog,
  recordFeedback,
  runPending,
} from '@kioku/core/passes';
import { ScriptedModel } from '@kioku/core/testing';
import { describe, expect, it } from 'vitest';
import type { BundleHarness } from './bundle.js';
import { randomScope } from './helpers.js';

/**
 * A chat model that answers each call with the next scripted reply (objects as JSON) and records the
 * prompts; a function reply runs first (e.g. another instance's write) and returns the reply.
 */
function scriptedModel(
  replies: (unknown | (() => Promise<unknown>))[],
): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push(messages.map((m) => ({ ...m })));
      if (replies.length === 0) throw new Error('model script exhausted');
      let reply = replies.shift();
      if (typeof reply === 'function') reply = await (reply as () => Promise<unknown>)();
      return { role: 'assistant', content: typeof reply === 'string' ? reply : JSON.stringify(reply) };
    },
  };
}

/** The fields a revert restores exactly. */
function exact(f: Fact) {
  return {
    id: f.id,
    title: f.title,
    content: f.content,
    category: f.category,
    tags: f.tags,
    metadata: f.metadata,
    provenance: f.provenance,
    createdAt: f.createdAt,
  };
}

/** The scope's facts, by id (facts created in one millisecond have no other order). */
async function factsOf(stores: KiokuStores, scope: Scope) {
  return (await stores.facts.list(scope)).map(exact).sort((x, y) => (x.id < y.id ? -1 : 1));
}

/** A conversation of the user's, written straight to its transcript: the log the preference pass reads. */
async function converse(
  stores: KiokuStores,
  scope: Scope,
  ...lines: [role: 'user' | 'assistant', text: string][]
) {
  const session = await stores.sessions.create(scope);
  await stores.sessions.transcriptAppend(
    scope,
    session.id,
    lines.map(([role, content]) => ({ role, content })),
  );
  return session.id;
}

/**
 * The memory life cycle on a whole bundle: a dream (with a scripted model, no server) applies, keeps and
 * reverts its changesets exactly; a proposed changeset is applied by id from another instance; feedback
 * and the conversation log's watermarks survive a reopen; a concurrent edit through another instance
 * during a pass is a conflict, never overwritten; the log is cleared after a failing model. `reopen` is
 * the second instance (another process over the same storage).
 */
export function lifecycleTests(h: BundleHarness): void {
  describe(`memory life cycle: ${h.name}`, () => {
    /** A fresh bundle (set up) and a second instance over the same storage, closed and destroyed after. */
    async function withBundles(body: (a: KiokuStores, b: KiokuStores) => Promise<void>): Promise<void> {
      const a = await h.create();
      let b: KiokuStores | undefined;
      try {
        await a.setup();
        b = await h.reopen();
        await b.setup();
        await body(a, b);
      } finally {
        await b?.close();
        await a.close();
        await h.destroy?.();
      }
    }

    it('a dream applies both passes, keeps them, and reverting restores every record exactly', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        const tea = await a.facts.create(scope, {
          title: 'Drinks',
          content: 'Likes tea',
          category: 'drinks',
          tags: ['tea'],
          metadata: { source: 'user' },
        });
        const green = await a.facts.create(scope, { content: 'Likes green tea' });
        const city = await a.facts.create(scope, { content: 'Lives in Chicago' });
        const noise = await a.facts.create(scope, { content: 'asdf' });
        await converse(a, scope, ['user', 'Stop using emoji!!!'], ['assistant', 'Sorry, no more emoji.']);
        const before = await factsOf(a, scope);
        const model = scriptedModel([
          {
            merges: [
              {
                sourceIds: [tea.id, green.id],
                content: 'Likes green tea',
                category: 'user-preferences/drinks',
                tags: ['tea'],
              },
            ],
            refinements: [{ id: city.id, category: 'user-preferences/location', tags: ['city'] }],
            toDelete: [{ id: noise.id }],
          },
          { preferences: [{ content: 'No emoji', sentiment: 'very_irritated', occurrences: 1 }] },
        ]);
        const result = await dream({ stores: a, model, scope });
        expect(result.passes.map((p) => [p.pass, p.error, p.result?.conflicts])).toEqual([
          ['consolidation', undefined, []],
          ['preferences', undefined, []],
        ]);
        expect(model.prompts[1]![1]!.content).toContain('user: Stop using emoji!!!');

        // Read back through the other instance: what was written, and the kept changesets.
        const after = await b.facts.list(scope, { order: 'oldest' });
        expect(after.map((f) => f.content).sort()).toEqual(
          ['Likes green tea', 'Lives in Chicago', 'No emoji'].sort(),
        );
        const merged = after.find((f) => f.provenance.sourceIds?.length)!;
        expect(merged.createdAt).toBe(tea.createdAt);
        expect(after.find((f) => f.id === city.id)!.category).toBe('user-preferences/location');
        const kept = await new ChangesetLog(b.sessions).list(scope);
        expect(kept.map((k) => [k.changeset.pass, k.changeset.status])).toEqual([
          ['consolidation', 'applied'],
          ['preferences', 'applied'],
        ]);

        const log = new ChangesetLog(b.sessions);
        for (const k of [...kept].reverse()) {
          expect((await log.revert(b.facts, scope, k.changeset.id)).conflicts).toEqual([]);
        }
        expect(await factsOf(a, scope)).toEqual(before);
        expect((await log.list(scope)).map((k) => k.changeset.status)).toEqual(['reverted', 'reverted']);
      });
    });

    it('a dry run kept as proposed writes no fact; another instance applies it by id', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        const x = await a.facts.create(scope, { content: 'Likes tea' });
        const y = await a.facts.create(scope, { content: 'Likes tea a lot' });
        const before = await factsOf(a, scope);
        const review = await dream({
          stores: a,
          model: scriptedModel([
            {
              merges: [{ sourceIds: [x.id, y.id], content: 'Likes tea a lot', category: 'drinks', tags: [] }],
            },
          ]),
          scope,
          dryRun: true,
          keep: true,
          preferences: { enabled: false },
        });
        const id = review.passes[0]!.changeset!.id;
        expect(await factsOf(a, scope)).toEqual(before);

        const other = new ChangesetLog(b.sessions);
        expect((await other.list(scope)).map((k) => [k.changeset.id, k.changeset.status])).toEqual([
          [id, 'proposed'],
        ]);
        const applied = await other.applyKept(b.facts, scope, id);
        expect(applied.conflicts).toEqual([]);
        expect((await a.facts.list(scope)).map((f) => f.content)).toEqual(['Likes tea a lot']);
        expect((await new ChangesetLog(a.sessions).get(scope, id))!.changeset.status).toBe('applied');
      });
    });

    it('a knowledge changeset (documents from recurring offloaded outputs) is applied and reverted from another instance', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        for (let i = 0; i < 3; i++) {
          await a.details.create(scope, {
            description: 'run_command output (cmd: cat config.yaml)',
            summary: `config, run ${i}`,
            content: `port: 808${i}\nhost: 0.0.0.0\n`.repeat(20),
          });
        }
        const { changeset } = await consolidateKnowledge({ stores: a, scope, dryRun: true, keep: true });
        const [op] = changeset.operations;
        if (op?.op !== 'create_document') throw new Error(`expected a document operation, got ${op?.op}`);
        const { id } = op.after;
        expect(await a.documents.get(scope, id)).toBeNull();

        const other = new ChangesetLog(b.sessions);
        expect((await other.applyKept(b, scope, changeset.id)).conflicts).toEqual([]);
        expect((await a.documents.get(scope, id))?.text).toContain('port: 8082');
        // Applying creates with the id it proposed: a second apply is refused, the document stays one.
        expect((await a.documents.list(scope)).map((d) => d.id)).toEqual([id]);

        expect((await new ChangesetLog(a.sessions).revert(a, scope, changeset.id)).conflicts).toEqual([]);
        expect(await b.documents.get(scope, id)).toBeNull();
        expect((await other.get(scope, changeset.id))!.changeset.status).toBe('reverted');
      });
    });

    it('feedback and the conversation log’s watermarks survive a reopen', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        await a.facts.create(scope, { content: 'Searches files with search_files' });
        await recordFeedback(a, scope, { kind: 'correction', text: 'Use grep, not search_files.' });
        const session = await converse(a, scope, ['user', 'Metric units, please.']);
        const model = scriptedModel([{}, { preferences: [] }]);
        await dream({ stores: a, model, scope });
        expect(model.prompts[0]![1]!.content).toContain('correction: Use grep, not search_files.');

        expect((await new FeedbackLog(b.sessions).list(scope)).map((f) => [f.kind, f.text])).toEqual([
          ['correction', 'Use grep, not search_files.'],
        ]);
        const log = new ConversationLog(b.sessions);
        expect((await log.read(scope)).entries).toEqual([]);
        await b.sessions.transcriptAppend(scope, session, { role: 'user', content: 'And 24-hour times.' });
        expect((await new ConversationLog(a.sessions).read(scope)).entries.map((e) => e.text)).toEqual([
          'And 24-hour times.',
        ]);
      });
    });

    it('a record another instance changes during the pass is a conflict, not overwritten', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        const edited = await a.facts.create(scope, { content: 'Lives in Chicago' });
        const doomed = await a.facts.create(scope, { content: 'asdf' });
        const model = scriptedModel([
          async () => {
            // Between the pass reading the facts and applying its changeset.
            await b.facts.update(scope, edited.id, { content: 'Lives in Berlin now' });
            return {
              refinements: [{ id: edited.id, category: 'user-preferences/location' }],
              toDelete: [{ id: doomed.id }],
            };
          },
        ]);
        const result = await dream({ stores: a, model, scope, preferences: { enabled: false } });
        const pass = result.passes[0]!;
        expect(pass.result!.conflicts.map((c) => [c.id, c.code])).toEqual([[edited.id, 'CONFLICT']]);
        expect(pass.changeset!.status).toBe('partially_applied');
        const now = await b.facts.get(scope, edited.id);
        expect([now?.content, now?.category]).toEqual(['Lives in Berlin now', edited.category]);
        expect(await b.facts.get(scope, doomed.id)).toBeNull();
      });
    });

    it('the log is cleared after a failing model, and nothing is written', async () => {
      await withBundles(async (a, b) => {
        const scope = randomScope();
        await converse(a, scope, ['user', 'Stop using emoji!!!'], ['assistant', 'OK.']);
        const result = await dream({
          stores: a,
          model: scriptedModel(['not json', '{"preferences": "nope"}']),
          scope,
          consolidation: { enabled: false },
        });
        expect(result.passes[0]!.error?.code).toBe('MODEL_OUTPUT');
        expect((await new ConversationLog(b.sessions).read(scope)).entries).toEqual([]);
        expect(await b.facts.count(scope)).toBe(0);
        expect(await new ChangesetLog(b.sessions).list(scope)).toEqual([]);
      });
    });

    it("save_memory's enrichment request outlives the instance that saved it: another enriches it once, per user", async () => {
      await withBundles(async (a, b) => {
        const users = [randomScope(), randomScope()];
        // An app whose queue never runs a job: as if its process stopped right after each reply.
        const app = new KiokuBuilder({
          stores: a,
          model: new ScriptedModel(),
          background: { guard: () => new Promise<never>(() => undefined) },
        })
          .withFacts({ mode: 'recall' })
          .build();
        for (const scope of users) {
          const convo = await app.startConversation(scope);
          const content = 'User lives in Chicago and likes green tea';
          const call = { toolCalls: [{ name: 'save_memory', arguments: { content } }] };
          await convo.run('remember this', new ScriptedModel([call, 'Saved.']));
        }
        const [saved] = await a.facts.list(users[0]!);
        const entries = {
          entries: [
            { content: 'User lives in Chicago', category: 'personal/home', tags: [] },
            { content: 'User likes green tea', category: 'user-preferences/drinks', tags: [] },
          ],
        };
        // Two instances drain the first user at once, each under the user's lease: one runs it.
        const models = [scriptedModel([entries]), scriptedModel([entries])];
        const runs = [a, b].map((stores, i) =>
          runPending(new EnrichmentOutbox({ stores, model: models[i]! }), stores.working, {
            users: [users[0]!.userId],
          }),
        );
        await Promise.all(runs);
        await runPending(new EnrichmentOutbox({ stores: b, model: models[1]! }), b.working, {
          users: [users[0]!.userId],
        });
        expect(models[0]!.prompts.length + models[1]!.prompts.length).toBe(1);
        expect((await factsOf(b, users[0]!)).map((f) => [f.content, f.provenance.source])).toEqual(
          expect.arrayContaining([
            ['User lives in Chicago', 'enrichment'],
            ['User likes green tea', 'enrichment'],
          ]),
        );
        expect(await b.facts.get(users[0]!, saved!.id)).toBeNull();
        // The other user's request is still theirs, pending, untouched.
        const other = new EnrichmentOutbox({ stores: b, model: scriptedModel([]) });
        const [waiting] = await a.facts.list(users[1]!);
        expect(await other.pending(users[1]!)).toEqual([{ factId: waiting!.id, version: waiting!.version }]);
        expect(await other.pending(users[0]!)).toEqual([]);
        // Reviewable and reversible: the kept changeset brings the saved memory back exactly.
        const log = new ChangesetLog(b.sessions);
        const [kept] = await log.list(users[0]!);
        await log.revert(b.facts, users[0]!, kept!.changeset.id);
        expect(await factsOf(b, users[0]!)).toEqual([exact(saved!)]);
      });
    });
  });
}
