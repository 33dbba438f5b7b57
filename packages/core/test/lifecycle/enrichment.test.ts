import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BackgroundEvent, type Fact, KiokuBuilder } from '../../src/index.js';
import { ChangesetLog } from '../../src/memory/changesets/changeset-log.js';
import { DEFAULT_MEMORY_RULES, enrichMemory } from '../../src/memory/enrichment/enrich.js';
import { answer, callTools, scriptedModel, toolResults } from '../features/memory-features.harness.js';
import { alice, contentOf, gate, scriptedJsonModel, seed, world } from './harness.js';

const RAW = 'user likes metric units and is in chicago, hates long answers';

const ENTRIES = {
  entries: [
    { content: 'User prefers metric units', category: 'user-preferences/units', tags: ['units'] },
    { content: 'User lives in Chicago', category: 'personal/home', tags: ['city'] },
    { content: 'User prefers short answers', category: 'user-preferences/style', tags: ['style'] },
  ],
};

async function saving(enrichmentReplies: unknown[], options: { directive?: string } = {}) {
  const { stores, clock } = world();
  const model = scriptedJsonModel(enrichmentReplies);
  const events: BackgroundEvent[] = [];
  const kioku = new KiokuBuilder({ stores, model, clock, background: { onEvent: (e) => events.push(e) } })
    .withFacts()
    .withFacts({
      mode: 'recall',
      ...(options.directive ? { enrichment: { directive: options.directive } } : {}),
    })
    .build();
  const convo = await kioku.startConversation(alice);
  const save = async (content = RAW) => {
    const turn = await convo.run(
      'remember this',
      scriptedModel([callTools(['save_memory', { content }]), answer('Saved.')]),
    );
    const [result] = toolResults(turn.messages);
    const original = (await contentOf(stores, alice)).find((f) => f.content === content);
    return { turn, result, original };
  };
  return { stores, clock, model, kioku, convo, events, save };
}

describe('save_memory enrichment', () => {
  it('saves the raw content at once, then replaces it with well-formed entries linked by provenance', async () => {
    const hold = gate();
    const { stores, model, kioku, events, save } = await saving([
      async () => {
        await hold.promise;
        return ENTRIES;
      },
    ]);
    const { turn, result, original } = await save();
    // The reply did not wait: the raw memory is saved and the model is still thinking.
    expect(turn.answer).toBe('Saved.');
    expect(result).toEqual({ ok: `Saved memory ${original!.id} (general).` });
    expect(original!.provenance).toMatchObject({ source: 'assistant', toolName: 'save_memory' });
    hold.open();
    await kioku.flush();

    expect(model.prompts[0]![0]!.content).toContain(DEFAULT_MEMORY_RULES);
    expect(model.prompts[0]![1]!.content).toContain(RAW);
    const facts = await contentOf(stores, alice);
    expect(facts.map((f) => [f.content, f.category, f.tags])).toEqual(
      ENTRIES.entries.map((e) => [e.content, e.category, e.tags]),
    );
    for (const f of facts) {
      expect(f.provenance).toEqual({
        source: 'enrichment',
        sourceIds: [original!.id],
        sessionId: original!.provenance.sessionId,
      });
      expect(f.createdAt).toBe(original!.createdAt);
    }
    expect(await stores.facts.get(alice, original!.id)).toBeNull();
    const done = events.find((e) => e.type === 'done');
    expect(done).toMatchObject({
      job: { kind: 'enrichment' },
      changeset: { pass: 'enrichment', status: 'applied' },
    });

    // Kept, and revertable: the original comes back exactly, the entries go.
    const log = new ChangesetLog(stores.sessions);
    const [kept] = await log.list(alice);
    await log.revert(stores.facts, alice, kept!.changeset.id);
    const back = await contentOf(stores, alice);
    expect(back.map((f) => [f.id, f.content, f.createdAt, f.provenance])).toEqual([
      [original!.id, RAW, original!.createdAt, original!.provenance],
    ]);
  });

  it('keeps the original when the model fails or its answer is invalid, and reports it', async () => {
    for (const [replies, code] of [
      [[{ entries: 'nope' }, { entries: [{ text: 'no content' }] }], 'MODEL_OUTPUT'],
      [[() => Promise.reject(new Error('connection reset'))], 'INTERNAL'],
    ] as const) {
      const { stores, kioku, events, save } = await saving([...replies]);
      const { original } = await save();
      await kioku.flush();
      expect(await contentOf(stores, alice)).toEqual([original]);
      expect(events.find((e) => e.type === 'failed')).toMatchObject({ job: { kind: 'enrichment' }, code });
    }
  });

  it('an update_memory of the original while the model works is a conflict: the edit stays, no entry is left', async () => {
    const hold = gate();
    const { stores, kioku, convo, events, save } = await saving([
      async () => {
        await hold.promise;
        return ENTRIES;
      },
    ]);
    const { original } = await save();
    const [edited] = await convo.executeToolCalls([
      {
        id: 'edit',
        name: 'update_memory',
        arguments: JSON.stringify({ id: original!.id, content: 'User likes metric units (user edit)' }),
      },
    ]);
    expect(edited!.content).toBe(`Updated memory ${original!.id}.`);
    hold.open();
    await kioku.flush();
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual([
      'User likes metric units (user edit)',
    ]);
    const done = events.find((e) => e.type === 'done');
    expect(done?.type === 'done' && done.result?.conflicts.map((c) => [c.op, c.id, c.code])).toEqual([
      ['delete', original!.id, 'CONFLICT'],
    ]);
    expect(await new ChangesetLog(stores.sessions).list(alice)).toEqual([]);
  });

  it('an original edited before the job runs is reported without calling the model', async () => {
    const { stores, clock } = world();
    const [original] = await seed(stores, clock, alice, [RAW]);
    await stores.facts.update(alice, original!.id, { content: 'edited' });
    const model = scriptedJsonModel([]);
    const { result } = await enrichMemory({ stores, model, scope: alice, original: original!, clock });
    expect(model.prompts).toHaveLength(0);
    expect(result!.conflicts).toMatchObject([{ op: 'delete', id: original!.id, code: 'CONFLICT' }]);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual(['edited']);
  });

  it('dedup applies to each entry: one a fact already says is dropped, one that extends a fact updates it', async () => {
    const { stores, clock } = world();
    const [city, units] = await seed(stores, clock, alice, [
      { content: 'User lives in Chicago, Illinois', category: 'personal/home' },
      { content: 'User prefers metric units', category: 'user-preferences/units', tags: ['units'] },
      RAW,
    ]);
    const original = (await contentOf(stores, alice))[2]!;
    const model = scriptedJsonModel([
      {
        entries: [
          { content: 'User lives in Chicago', category: 'personal/home' },
          {
            content: 'User prefers metric units for distances and weights',
            category: 'user-preferences/units',
          },
          { content: 'User prefers short answers', category: 'user-preferences/style' },
        ],
      },
    ]);
    const { changeset, result } = await enrichMemory({ stores, model, scope: alice, original, clock });
    expect(
      changeset.operations.map((o) => [
        o.op,
        'before' in o ? o.before.id : 'content' in o.after ? o.after.content : '',
      ]),
    ).toEqual([
      ['create', 'User prefers short answers'],
      ['update', units!.id],
      ['delete', original.id],
    ]);
    expect(changeset.notes).toEqual([`Already known as ${city!.id}: User lives in Chicago`]);
    expect(result!.conflicts).toEqual([]);
    expect((await contentOf(stores, alice)).map((f: Fact) => f.content).sort()).toEqual(
      [
        'User lives in Chicago, Illinois',
        'User prefers metric units for distances and weights',
        'User prefers short answers',
      ].sort(),
    );
  });

  it('no entries, one equal to the original, or entries that leave most of it out change nothing', async () => {
    const { stores, clock } = world();
    const content = 'User prefers green tea, lives in Porto and works night shifts';
    const [original] = await seed(stores, clock, alice, [{ content, category: 'prefs', tags: [] }]);
    const notes: (string | undefined)[] = [];
    for (const reply of [
      { entries: [] },
      { entries: [{ content, category: 'prefs' }] },
      { entries: [{ content: 'User prefers green tea', category: 'prefs' }] },
    ]) {
      const { changeset, result } = await enrichMemory({
        stores,
        model: scriptedJsonModel([reply]),
        scope: alice,
        original: original!,
        clock,
      });
      expect(changeset.operations).toEqual([]);
      expect(result).toBeUndefined();
      expect(await contentOf(stores, alice)).toEqual([original]);
      notes.push(changeset.notes?.[0]);
    }
    expect(notes).toEqual([
      'The model proposed no entries; the saved memory is kept as it is.',
      'The saved memory is already well-formed.',
      "The entries hold 44% of the saved memory's terms (at least 50% needed); the saved memory is kept as it is.",
    ]);
  });

  it('a directive replaces the memory rules; enrichment: false (or no model) only saves', async () => {
    const custom = await saving([ENTRIES], { directive: 'My memory-rules.md' });
    await custom.save();
    await custom.kioku.flush();
    expect(custom.model.prompts[0]![0]!.content.startsWith('My memory-rules.md')).toBe(true);

    const { stores, clock } = world();
    const model = scriptedJsonModel([]);
    const kioku = new KiokuBuilder({ stores, model, clock })
      .withFacts({ mode: 'recall', enrichment: false })
      .build();
    const convo = await kioku.startConversation(alice);
    await convo.run('remember', scriptedModel([callTools(['save_memory', { content: RAW }]), answer()]));
    await kioku.flush();
    expect(model.prompts).toHaveLength(0);
    expect((await contentOf(stores, alice)).map((f) => f.content)).toEqual([RAW]);
  });

  it("the builder's memory-rules.md directive file is the memory rules, read when the job runs", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kioku-rules-'));
    try {
      await writeFile(path.join(dir, 'memory-rules.md'), 'Rules from the file, version 1');
      const { stores, clock } = world();
      const model = scriptedJsonModel([ENTRIES, ENTRIES]);
      const kioku = new KiokuBuilder({ stores, model, clock, directives: { directory: dir } })
        .withFacts({ mode: 'recall' })
        .build();
      const convo = await kioku.startConversation(alice);
      const save = async (content: string) => {
        await convo.run('remember', scriptedModel([callTools(['save_memory', { content }]), answer()]));
        await kioku.flush();
      };
      await save(RAW);
      // Edited between two saves: the next job reads the new rules.
      await writeFile(path.join(dir, 'memory-rules.md'), 'Rules from the file, version 2');
      await save('user owns a red bike and rides it to work');
      expect(model.prompts.map((p) => p[0]!.content.split('\n')[0])).toEqual([
        'Rules from the file, version 1',
        'Rules from the file, version 2',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a full queue refuses the enrichment (reported): the saved memory stays as it is', async () => {
    const { stores, clock } = world();
    const hold = gate();
    const events: BackgroundEvent[] = [];
    const model = scriptedJsonModel([
      async () => {
        await hold.promise;
        return ENTRIES;
      },
    ]);
    const kioku = new KiokuBuilder({
      stores,
      model,
      clock,
      background: { maxPending: 1, onEvent: (e) => events.push(e) },
    })
      .withFacts({ mode: 'recall' })
      .build();
    const convo = await kioku.startConversation(alice);
    await convo.run(
      'remember',
      scriptedModel([
        callTools(['save_memory', { content: RAW }], ['save_memory', { content: 'User owns a red bike' }]),
        answer(),
      ]),
    );
    expect(events.filter((e) => e.type === 'refused')).toMatchObject([
      { job: { kind: 'enrichment' }, reason: 'full' },
    ]);
    hold.open();
    await kioku.close();
    expect((await contentOf(stores, alice)).map((f) => f.content)).toContain('User owns a red bike');
  });
});
