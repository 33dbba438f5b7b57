import { describe, expect, it } from 'vitest';
import { isKiokuError, KiokuBuilder, type KiokuStores, type Scope } from '../../src/index.js';
import { applyChangeset } from '../../src/memory/changesets/apply.js';
import type { Changeset, DocumentDraft } from '../../src/memory/changesets/changeset.js';
import { formatChangeset, newChangeset } from '../../src/memory/changesets/changeset.js';
import {
  CHANGESET_SCHEMA_VERSION,
  ChangesetLog,
  isChangesetSession,
} from '../../src/memory/changesets/changeset-log.js';
import { knowledgeChangeset } from '../../src/memory/knowledge/consolidate-knowledge.js';
import type { ManualClock } from '../../src/testing.js';
import { alice, bob, DAY, NOW, scriptedJsonModel, seed, world } from './harness.js';

const CONFIG = (port: number) =>
  `server:\n  host: 0.0.0.0\n  port: ${port}\ndatabase:\n  url: postgres://db.internal:5432/app\n  pool: 10\n`.repeat(
    8,
  );

/** `cat config.yaml` offloaded three times a day apart, and one `ls` once. */
async function offloads(stores: KiokuStores, clock: ManualClock, scope: Scope = alice) {
  clock.set(NOW - 5 * DAY);
  const config = [];
  for (const port of [8080, 8080, 8081]) {
    config.push(
      await stores.details.create(scope, {
        description: 'run_command output (cmd: cat config.yaml)',
        summary: `YAML config, port ${port}`,
        content: CONFIG(port),
      }),
    );
    clock.advance(DAY);
  }
  await stores.details.create(scope, { description: 'run_command output (cmd: ls)', content: 'a\nb\nc' });
  clock.set(NOW);
  return config;
}

/** The document a knowledge changeset's first operation creates. */
function documentOf(cs: Changeset): DocumentDraft {
  const op = cs.operations[0];
  if (op?.op !== 'create_document') throw new Error(`not a document operation: ${op?.op}`);
  return op.after;
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.catch((e: unknown) => e);
  return isKiokuError(error) ? error.code : `not a Kioku error: ${String(error)}`;
}

describe('consolidation of layer 2 into knowledge', () => {
  it('turns a recurring offloaded output into a knowledge document, as a kept changeset it can revert', async () => {
    const { stores, clock } = world();
    const config = await offloads(stores, clock);
    const kioku = new KiokuBuilder({ stores, clock }).withKnowledge({ strategy: 'indexed' }).build();
    const { changeset, result } = await kioku.passes.consolidateKnowledge(alice);
    expect(changeset).toMatchObject({ pass: 'knowledge', status: 'applied', userId: 'alice' });
    expect(changeset.operations).toHaveLength(1);
    const [op] = changeset.operations;
    expect(op).toMatchObject({
      op: 'create_document',
      after: {
        title: 'run_command output (cmd: cat config.yaml)',
        tags: ['consolidated', 'tool_output'],
        metadata: { occurrences: 3, consolidatedFrom: config.map((c) => c.id).reverse() },
      },
    });
    expect(op!.reason).toMatch(/offloaded 3 times/);
    expect(result!.conflicts).toEqual([]);
    const { id } = documentOf(changeset);
    const document = (await stores.documents.get(alice, id))!;
    // Occurrences oldest first with their summaries, then the newest output.
    expect(document.text).toContain('YAML config, port 8080');
    expect(document.text.indexOf('port 8080')).toBeLessThan(document.text.indexOf('port 8081'));
    expect(document.text).toContain(CONFIG(8081).split('\n').slice(0, 3).join('\n'));
    // The knowledge feature now answers from it.
    const convo = await kioku.startConversation(alice);
    const turn = await convo.prepare('Which port does the server listen on?');
    expect(turn.messages.some((m) => m.content.includes('port: 8081'))).toBe(true);
    // The offloaded outputs stay.
    expect(await stores.details.list(alice)).toHaveLength(4);

    expect((await kioku.passes.revert(alice, changeset.id)).conflicts).toEqual([]);
    expect(await stores.documents.get(alice, id)).toBeNull();
    expect((await kioku.passes.changesets(alice))[0]!.changeset.status).toBe('reverted');
    expect(await kioku.passes.revert(alice, changeset.id)).toEqual({ reverted: [], conflicts: [] });
  });

  it('proposes nothing for an output already consolidated, and never reads another user’s outputs', async () => {
    const { stores, clock } = world();
    await offloads(stores, clock);
    await offloads(stores, clock, bob);
    const kioku = new KiokuBuilder({ stores, clock }).build();
    await kioku.passes.consolidateKnowledge(alice);
    const again = await kioku.passes.consolidateKnowledge(alice);
    expect(again.changeset.operations).toEqual([]);
    expect(again.changeset.notes).toEqual([
      expect.stringMatching(/^"run_command output \(cmd: cat config.yaml\)" is already consolidated/),
    ]);
    expect(await stores.documents.list(bob)).toEqual([]);
    const bobs = await kioku.passes.consolidateKnowledge(bob);
    const ids = (documentOf(bobs.changeset).metadata as { consolidatedFrom: string[] }).consolidatedFrom;
    for (const id of ids) expect(await stores.details.get(bob, id)).not.toBeNull();
  });

  it('is reviewable: a dry run kept as proposed writes nothing until applied by id', async () => {
    const { stores, clock } = world();
    await offloads(stores, clock);
    const kioku = new KiokuBuilder({ stores, clock }).build();
    const { changeset } = await kioku.passes.consolidateKnowledge(alice, { dryRun: true, keep: true });
    expect(changeset.status).toBe('proposed');
    expect(await stores.documents.list(alice)).toEqual([]);
    const text = formatChangeset(changeset);
    expect(text).toContain('0 to create, 0 to update, 0 to delete, 1 documents to create');
    expect(text).toMatch(/\+ document knowledge-[0-9a-f]{12} "run_command output \(cmd: cat config.yaml\)"/);
    expect(text).toContain('reason: "run_command output (cmd: cat config.yaml)" was offloaded 3 times');
    const applied = await kioku.passes.applyKept(alice, changeset.id);
    expect(applied.applied).toHaveLength(1);
    expect(await stores.documents.list(alice)).toHaveLength(1);
  });

  it('applies with the same conflict rules: a taken id is a conflict; a replaced document is not reverted', async () => {
    const { stores, clock } = world();
    await offloads(stores, clock);
    const kioku = new KiokuBuilder({ stores, clock }).build();
    const { changeset } = await kioku.passes.consolidateKnowledge(alice, { dryRun: true, keep: true });
    const id = documentOf(changeset).id;
    await stores.documents.create(alice, { id, title: 'Mine', text: 'Written by the user meanwhile.' });
    const result = await kioku.passes.applyKept(alice, changeset.id);
    expect(result.conflicts).toEqual([
      { index: 0, op: 'create_document', id, code: 'CONFLICT', message: expect.any(String) },
    ]);
    expect((await stores.documents.get(alice, id))!.title).toBe('Mine');

    const { stores: s2, clock: c2 } = world();
    await offloads(s2, c2);
    const k2 = new KiokuBuilder({ stores: s2, clock: c2 }).build();
    const done = await k2.passes.consolidateKnowledge(alice);
    const docId = documentOf(done.changeset).id;
    await s2.documents.delete(alice, docId);
    await s2.documents.create(alice, { id: docId, title: 'Replaced', text: 'Another text.' });
    const reverted = await k2.passes.revert(alice, done.changeset.id);
    expect(reverted.conflicts).toMatchObject([{ op: 'create_document', id: docId, code: 'CONFLICT' }]);
    expect((await s2.documents.get(alice, docId))!.title).toBe('Replaced');
  });

  it('lets a model write the document, and assembles it when the model fails (noted)', async () => {
    const { stores, clock } = world();
    await offloads(stores, clock);
    const model = scriptedJsonModel([{ title: 'App config', text: 'The app listens on port 8081.' }]);
    const cs = await knowledgeChangeset({
      details: stores.details,
      documents: stores.documents,
      scope: alice,
      model,
    });
    expect(documentOf(cs)).toMatchObject({
      title: 'App config',
      text: 'The app listens on port 8081.',
    });
    expect(cs.usage).toEqual({ inputTokens: 100, outputTokens: 10 });
    const prompt = model.prompts[0]!.map((m) => m.content).join('\n');
    expect(prompt).toContain('produced 3 times');

    const broken = scriptedJsonModel(['nope', 'still nope']);
    const fallback = await knowledgeChangeset({
      details: stores.details,
      documents: stores.documents,
      scope: alice,
      model: broken,
    });
    expect(documentOf(fallback).title).toBe('run_command output (cmd: cat config.yaml)');
    expect(fallback.notes).toEqual([
      expect.stringMatching(/could not write .* \(MODEL_OUTPUT\); it was assembled/),
    ]);
  });

  it('refuses to apply document operations without a document store, before writing anything', async () => {
    const { stores, clock } = world();
    await offloads(stores, clock);
    await seed(stores, clock, alice, ['Tea']);
    const cs = await knowledgeChangeset({
      details: stores.details,
      documents: stores.documents,
      scope: alice,
    });
    const mixed = {
      ...cs,
      operations: [
        { op: 'delete' as const, before: (await stores.facts.list(alice))[0]!, reason: 'x' },
        ...cs.operations,
      ],
    };
    expect(await code(applyChangeset(stores.facts, alice, mixed))).toBe('VALIDATION');
    expect(await stores.facts.count(alice)).toBe(1);
    expect(
      await code(
        knowledgeChangeset({
          details: stores.details,
          documents: stores.documents,
          scope: alice,
          minOccurrences: 1,
        }),
      ),
    ).toBe('VALIDATION');
  });
});

describe('kept changesets across the format change', () => {
  /** The changeset session's k-v value of a changeset, rewritten as `edit` makes it. */
  async function rewrite(
    stores: KiokuStores,
    id: string,
    edit: (record: Record<string, unknown>) => unknown,
  ) {
    const session = (await stores.sessions.list(alice)).find(isChangesetSession)!;
    const key = `changeset/${id}`;
    const value = (await stores.sessions.kvGet(alice, session.id, key))!.value;
    await stores.sessions.kvSet(alice, session.id, key, JSON.stringify(edit(JSON.parse(value))));
  }

  it('reads a changeset kept before documents existed (no schemaVersion) and reverts it exactly', async () => {
    const { stores, clock } = world();
    const [tea] = await seed(stores, clock, alice, ['Tea']);
    const log = new ChangesetLog(stores.sessions);
    const cs = newChangeset('consolidation', alice, [{ op: 'delete', before: tea!, reason: 'stale' }], {
      createdAt: new Date(NOW).toISOString(),
    });
    await log.apply(stores.facts, alice, cs);
    // As the previous version wrote it: the same record without the field.
    await rewrite(stores, cs.id, ({ schemaVersion: _dropped, ...old }) => old);
    const kept = (await log.get(alice, cs.id))!;
    expect(kept.schemaVersion).toBe(1);
    expect(kept.changeset.operations).toEqual(cs.operations);
    expect((await log.revert(stores.facts, alice, cs.id)).conflicts).toEqual([]);
    expect((await stores.facts.get(alice, tea!.id))?.content).toBe('Tea');
    // Written back in the current format.
    expect((await log.get(alice, cs.id))!.schemaVersion).toBe(CHANGESET_SCHEMA_VERSION);
  });

  it('refuses a changeset a newer version kept (UNSUPPORTED), rather than misread it', async () => {
    const { stores, clock } = world();
    await seed(stores, clock, alice, ['Tea']);
    const log = new ChangesetLog(stores.sessions);
    const cs = newChangeset('consolidation', alice, [], { createdAt: new Date(NOW).toISOString() });
    await log.propose(alice, cs);
    await rewrite(stores, cs.id, (record) => ({ ...record, schemaVersion: CHANGESET_SCHEMA_VERSION + 1 }));
    expect(await code(log.get(alice, cs.id))).toBe('UNSUPPORTED');
  });
});
