import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores } from '@kioku/core';
import { storesOverBackend } from '@kioku/core/adapter';
import { InMemoryDetailStore, InMemoryDocumentStore } from '@kioku/core/store';
import {
  detailStoreSuite,
  documentStoreSuite,
  factStoreSuite,
  type StoreHarness,
} from '@kioku/store-test-suite';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStores, SqliteRecordBackend } from '../src/index.js';
import { sqliteFileHarness } from './file-harness.js';

/** Searches always go to SQL, never to a partition held decoded: the suites then check the push-downs. */
class PushedDownBackend extends SqliteRecordBackend {
  override get ownRanking(): boolean {
    return true;
  }
}

function pushedDownHarness<S extends object>(
  name: string,
  pick: (stores: KiokuStores) => S,
): StoreHarness<S> {
  return sqliteFileHarness(
    `sqlite records, searches in SQL: ${name}`,
    (file, clock) => storesOverBackend(new PushedDownBackend({ file }), { clock }),
    pick,
  );
}

factStoreSuite(pushedDownHarness('facts', (s) => s.facts));
documentStoreSuite(pushedDownHarness('documents', (s) => s.documents));
detailStoreSuite(pushedDownHarness('details', (s) => s.details));

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function tempFile(): string {
  dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-search-'));
  return path.join(dir, 'kioku.db');
}

const WORDS = ['hiking', 'family', 'project', 'deadline', 'cooking', 'dinner', 'garden', 'paint', 'trip'];
const sentence = (i: number) =>
  `Note ${i}: ${WORDS[i % 9]} and ${WORDS[(i * 7) % 9]} with ${WORDS[(i * 5) % 9]} on day ${i % 13}.`;

describe('document and detail search in SQL', () => {
  it('answers as core does over the same records: same hits, order and scores', async () => {
    const file = tempFile();
    const stores = createSqliteStores({ file, chunkTokens: 40 });
    await stores.setup();
    const scope = { userId: 'u1', agentId: 'a1' };
    for (let d = 0; d < 12; d++) {
      const text = Array.from({ length: 30 }, (_, i) => sentence(d * 30 + i)).join(' ');
      await stores.documents.create(scope, {
        title: `Guide ${WORDS[d % 9]}`,
        text,
        tags: d % 3 === 0 ? ['Outdoor'] : [],
      });
    }
    for (let i = 0; i < 60; i++) {
      await stores.details.create(
        { ...scope, threadId: i % 2 ? 't1' : 't2' },
        {
          description: `tool output ${WORDS[i % 9]}`,
          content: sentence(i),
          ...(i % 5 === 0 ? { type: 'file' as const } : {}),
        },
      );
    }
    const detailList = await stores.details.list(scope, { limit: 100 });
    await stores.details.deactivate(scope, detailList[7]!.id);
    const documents = new InMemoryDocumentStore({ chunkTokens: 40 });
    await documents.restore(await stores.documents.snapshot({ userId: 'u1' }));
    const details = new InMemoryDetailStore();
    await details.restore(await stores.details.snapshot({ userId: 'u1' }));
    // A fresh bundle has not decoded the partitions: its searches are SQLite's.
    const fresh = createSqliteStores({ file });
    for (const query of [
      { query: 'family hiking trip' },
      { query: 'guide garden paint', limit: 20 },
      { query: 'cooking dinner', tags: ['outdoor'] },
      { query: 'the of and' },
    ]) {
      const theirs = await documents.search(scope, query);
      const ours = await fresh.documents.search(scope, query);
      expect(theirs.length).toBeGreaterThan(query.query === 'the of and' ? -1 : 0);
      expect(ours.map((h) => [h.documentId, h.chunk.index])).toEqual(
        theirs.map((h) => [h.documentId, h.chunk.index]),
      );
      ours.forEach((hit, i) => {
        expect(hit.score).toBeCloseTo(theirs[i]!.score, 6);
        expect(hit).toEqual({ ...theirs[i]!, score: hit.score });
      });
    }
    for (const query of [
      { query: 'tool output family' },
      { query: 'hiking deadline', limit: 30, includeInactive: true },
      { query: 'garden', type: 'file' as const },
      { query: 'paint trip', threadId: 't1', agentId: 'a1' },
    ]) {
      const theirs = await details.search(scope, query);
      const ours = await fresh.details.search(scope, query);
      expect(theirs.length).toBeGreaterThan(0);
      expect(ours.map((h) => h.detail.id)).toEqual(theirs.map((h) => h.detail.id));
      ours.forEach((hit, i) => {
        expect(hit.score).toBeCloseTo(theirs[i]!.score, 6);
        expect(hit.detail).toEqual(theirs[i]!.detail);
      });
    }
    await fresh.close();
    await stores.close();
  });

  it('indexes chunks and details in the records table (read directly), and drops them from the index on delete', async () => {
    const file = tempFile();
    const stores = createSqliteStores({ file });
    await stores.setup();
    const scope = { userId: 'u1' };
    const doc = await stores.documents.create(scope, { title: 'Cello', text: 'Practise the cello daily.' });
    await stores.details.create(scope, { description: 'orchestra', content: 'Rehearsal on Friday' });
    const peek = new Database(file, { readonly: true });
    const match = (term: string) =>
      peek
        .prepare(
          "SELECT r.key FROM kioku_records_fts f JOIN kioku_records r ON r.seq = f.rowid WHERE kioku_records_fts MATCH 'search_terms : ' || ?",
        )
        .pluck()
        .all(term);
    expect(match('cello')).toEqual([`${doc.id}:c:0`]);
    expect(match('rehears')).toHaveLength(1);
    await stores.documents.delete(scope, doc.id);
    expect(match('cello')).toEqual([]);
    expect(await createSqliteStores({ file }).documents.search(scope, { query: 'cello' })).toEqual([]);
    peek.close();
    await stores.close();
  });
});

describe('ranking: bm25 on the records layout', () => {
  it("ranks by FTS5's bm25() order, also over a partition the process holds decoded", async () => {
    const file = tempFile();
    const stores = createSqliteStores({ file, search: { ranking: 'bm25' } });
    await stores.setup();
    const scope = { userId: 'u1' };
    await stores.facts.create(scope, { content: 'User plays chess on weekends' });
    const cello = await stores.facts.create(scope, { content: 'User plays the cello in an orchestra' });
    await stores.details.create(scope, { description: 'cello', content: 'orchestra rehearsal notes' });
    await stores.facts.list(scope); // the partition is decoded now: core would rank it in memory
    const facts = await stores.facts.search(scope, { query: 'cello orchestra' });
    expect(facts[0]?.fact.id).toBe(cello.id);
    // bm25() scores, not core's: with the statistics of the whole table they differ.
    const kioku = await createSqliteStores({ file }).facts.search(scope, { query: 'cello orchestra' });
    expect(facts[0]!.score).toBeGreaterThan(0);
    expect(facts[0]!.score).not.toBeCloseTo(kioku[0]!.score, 6);
    const details = await stores.details.search(scope, { query: 'cello orchestra' });
    expect(details).toHaveLength(1);
    expect(details[0]!.score).toBeGreaterThan(0);
    await stores.close();
  });
});
