import { describe, expect, it } from 'vitest';
import {
  createInMemoryStores,
  type Fact,
  HashingEmbedder,
  KiokuBuilder,
  withEmbeddings,
} from '../../src/index.js';
import { compareTexts, DEDUP_THRESHOLD, findNearDuplicate } from '../../src/store/facts/near-duplicate.js';
import type { FactStore } from '../../src/store/facts/store.js';
import { answer, callTools, scriptedModel, toolResults } from '../features/memory-features.harness.js';
import { PARAPHRASES } from './fixtures/paraphrases.js';
import { alice, bob } from './harness.js';

/** Decisions on the fixture at a threshold: right, duplicates (created instead), lossy (anything else). */
function measure(threshold: number) {
  let right = 0;
  let duplicates = 0;
  let lossy = 0;
  for (const pair of PARAPHRASES) {
    const { decision } = compareTexts(pair.new, pair.old, threshold);
    if (decision === pair.expected) right++;
    else if (decision === 'created') duplicates++;
    else lossy++;
  }
  return { right, duplicates, lossy };
}

describe('dedup before store: the decision', () => {
  it('the default threshold is the measured one: no loss on the paraphrase fixture, every lower one loses', () => {
    expect(PARAPHRASES.length).toBe(84);
    expect(measure(DEDUP_THRESHOLD)).toEqual({ right: 72, duplicates: 12, lossy: 0 });
    // The sweep behind DEDUP_THRESHOLD's doc comment.
    expect(measure(0.95).lossy).toBe(0);
    expect(measure(0.9).lossy).toBe(1);
    expect(measure(0.85).lossy).toBe(3);
    expect(measure(0.8).lossy).toBe(4);
    expect(measure(0.7).lossy).toBe(12);
    // Every pair a lexical comparison can decide is decided right at the default.
    for (const pair of PARAPHRASES.filter((p) => !p.hard && p.expected !== 'skipped')) {
      expect(compareTexts(pair.new, pair.old).decision, `${pair.old} → ${pair.new}`).toBe(pair.expected);
    }
  });

  it('a negation or a number on one side only is never a near-duplicate, at any threshold', () => {
    expect(compareTexts("User doesn't like coffee", 'User likes coffee', 0.5).decision).toBe('created');
    expect(compareTexts('User likes coffee', 'User does not like coffee', 0.5).decision).toBe('created');
    expect(compareTexts('User has 3 cats', 'User has 2 cats', 0.3).decision).toBe('created');
    expect(compareTexts('User runs 5 km daily', 'User runs 10 km daily', 0.3).decision).toBe('created');
    // Without the guards these are a skip and an update.
    expect(compareTexts('User runs', 'User runs 5 km', 0.3).decision).toBe('skipped');
    expect(compareTexts('User runs 5 km daily', 'User runs daily', 0.5).decision).toBe('updated');
  });

  it('finds the near-duplicate among the user’s similar facts only', async () => {
    const stores = createInMemoryStores();
    const lives = await stores.facts.create(alice, { content: 'User lives in Berlin' });
    await stores.facts.create(bob, { content: 'User lives in Berlin with partner Sam' });
    const skip = await findNearDuplicate(stores.facts, alice, 'I live in Berlin.');
    expect(skip).toMatchObject({ decision: 'skipped', similar: { id: lives.id }, similarity: 1 });
    const update = await findNearDuplicate(stores.facts, alice, 'User lives in Berlin with partner Sam');
    expect(update).toMatchObject({ decision: 'updated', similar: { id: lives.id } });
    const create = await findNearDuplicate(stores.facts, alice, 'User lives in Munich');
    expect(create.decision).toBe('created');
    expect(create.similar).toBeUndefined();
    expect(create.hits.map((f) => f.id)).toEqual([lives.id]);
    expect(
      (await findNearDuplicate(stores.facts, alice, 'I live in Berlin.', { exclude: [lives.id] })).decision,
    ).toBe('created');
  });
});

async function kiokuWithTools(options: { dedup?: false | { threshold: number } } = {}) {
  const stores = createInMemoryStores();
  const dedup = options.dedup === undefined ? {} : { dedup: options.dedup };
  const kioku = new KiokuBuilder({ stores })
    .withFacts(dedup)
    .withFacts({ mode: 'recall', ...dedup, enrichment: false })
    .build();
  const convo = await kioku.startConversation(alice);
  return { stores, convo };
}

describe('dedup over a hybrid store', () => {
  it('decides the same way when the search is lexical + vector', async () => {
    const stores = withEmbeddings(createInMemoryStores(), {
      embedder: new HashingEmbedder({ dimensions: 64 }),
    });
    const lives = await stores.facts.create(alice, { content: 'User lives in Berlin' });
    await stores.facts.create(alice, { content: 'User owns a red bike' });
    expect(await findNearDuplicate(stores.facts, alice, 'I live in Berlin.')).toMatchObject({
      decision: 'skipped',
      similar: { id: lives.id },
    });
    expect((await findNearDuplicate(stores.facts, alice, 'User owns a blue bike')).decision).toBe('created');
  });
});

describe('dedup before store: create_memory and save_memory', () => {
  it('create_memory skips what a fact already says, naming it, and creates nothing', async () => {
    const { stores, convo } = await kiokuWithTools();
    const fact = await stores.facts.create(alice, { content: 'User is vegetarian and avoids fish' });
    const turn = await convo.run(
      'remember',
      scriptedModel([
        callTools(['create_memory', { title: 'Diet', content: 'User is vegetarian.' }]),
        answer(),
      ]),
    );
    expect(toolResults(turn.messages)).toEqual([
      {
        ok: `Skipped: memory ${fact.id} already says this ("User is vegetarian and avoids fish"); nothing was created.`,
      },
    ]);
    expect(await stores.facts.list(alice)).toEqual([fact]);
  });

  it('create_memory updates a fact the new text extends (its version goes up), and creates what is new', async () => {
    const { stores, convo } = await kiokuWithTools();
    const fact = await stores.facts.create(alice, { content: 'User works at Acme', tags: ['work'] });
    const turn = await convo.run(
      'remember',
      scriptedModel([
        callTools(
          [
            'create_memory',
            { title: 'Job', content: 'User works at Acme as a senior data engineer', tags: ['job'] },
          ],
          ['create_memory', { title: 'City', content: 'User lives in Lisbon' }],
        ),
        answer(),
      ]),
    );
    const [updated, created] = toolResults(turn.messages);
    expect(updated).toEqual({
      ok: `Updated memory ${fact.id}: it said part of this and now says all of it, instead of a near-duplicate.`,
    });
    const after = await stores.facts.get(alice, fact.id);
    expect(after).toMatchObject({
      content: 'User works at Acme as a senior data engineer',
      title: 'Job',
      tags: ['work', 'job'],
      version: 2,
      provenance: fact.provenance,
    });
    const all = await stores.facts.list(alice);
    expect(all).toHaveLength(2);
    const city = all.find((f) => f.content === 'User lives in Lisbon')!;
    expect(created).toEqual({ ok: `Created memory ${city.id}: City` });
  });

  it('save_memory says skipped / updated / saved with the id; dedup: false saves every text', async () => {
    const { stores, convo } = await kiokuWithTools();
    const fact = await stores.facts.create(alice, { content: 'User speaks Japanese and Spanish' });
    const turn = await convo.run(
      'remember',
      scriptedModel([
        callTools(
          ['save_memory', { content: 'User speaks Japanese.' }],
          ['save_memory', { content: 'User speaks Japanese and Spanish and is learning Korean' }],
          ['save_memory', { content: 'User has a cat named Luna', category: 'personal/pets' }],
        ),
        answer(),
      ]),
    );
    const luna = (await stores.facts.list(alice)).find((f) => f.content.includes('Luna'))!;
    expect(toolResults(turn.messages)).toEqual([
      {
        ok: `Skipped: memory ${fact.id} already says this ("User speaks Japanese and Spanish"); nothing was saved.`,
      },
      {
        ok: `Updated memory ${fact.id} (general): it said part of this and now says all of it, instead of a near-duplicate.`,
      },
      { ok: `Saved memory ${luna.id} (personal/pets).` },
    ]);

    const off = await kiokuWithTools({ dedup: false });
    await off.stores.facts.create(alice, { content: 'User speaks Japanese' });
    await off.convo.run(
      'remember',
      scriptedModel([callTools(['save_memory', { content: 'User speaks Japanese' }]), answer()]),
    );
    expect((await off.stores.facts.list(alice)).map((f) => f.content)).toEqual([
      'User speaks Japanese',
      'User speaks Japanese',
    ]);
  });

  it('the threshold is an option of each feature', async () => {
    const { stores, convo } = await kiokuWithTools({ dedup: { threshold: 0.8 } });
    const fact = await stores.facts.create(alice, {
      content: 'Jon lost his job as a banker and opened a dance studio',
    });
    const turn = await convo.run(
      'remember',
      scriptedModel([callTools(['save_memory', { content: 'Jon opened a dance studio.' }]), answer()]),
    );
    // 6 of its 7 terms and term pairs are in the fact: a skip at 0.8, a new fact at the default.
    expect(toolResults(turn.messages)[0]).toEqual({
      ok: `Skipped: memory ${fact.id} already says this ("Jon lost his job as a banker and opened a dance studio"); nothing was saved.`,
    });
  });

  it('an update never overwrites a fact changed since the search read it: the text is created instead', async () => {
    const stores = createInMemoryStores();
    const fact = await stores.facts.create(alice, { content: 'User plays guitar' });
    // Someone edits the fact between the dedup's search and its update: the search shows the old version.
    const stale = new Proxy(stores.facts, {
      get(target, key) {
        if (key === 'search') {
          return async (...args: Parameters<FactStore['search']>) => {
            const hits = await target.search(...args);
            await target.update(alice, fact.id, { content: 'User plays guitar and piano (user edit)' });
            return hits;
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const kioku = new KiokuBuilder({ stores: { ...stores, facts: stale } })
      .withFacts({ mode: 'recall', enrichment: false })
      .build();
    const convo = await kioku.startConversation(alice);
    await convo.run(
      'remember',
      scriptedModel([callTools(['save_memory', { content: 'User plays guitar in a band' }]), answer()]),
    );
    const contents = (await stores.facts.list(alice)).map((f: Fact) => f.content);
    expect(contents).toEqual(['User plays guitar and piano (user edit)', 'User plays guitar in a band']);
  });
});
