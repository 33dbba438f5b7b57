import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Fact, KiokuStores, Scope } from '@kioku/core';
import { factSearchText, LexicalIndex, storesOverBackend } from '@kioku/core/adapter';
import { type FactInput, type FactStore, InMemoryFactStore } from '@kioku/core/store';
import { ManualClock } from '@kioku/core/testing';
import { expectKiokuError, randomScope } from '@kioku/store-test-suite';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStores, SqliteRecordBackend } from '../src/index.js';
import { ftsExpression, quoteFts } from '../src/search.js';

let dir: string;
let file: string;
const open: Array<{ close(): unknown }> = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-'));
  file = path.join(dir, 'kioku.db');
});

afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
  rmSync(dir, { recursive: true, force: true });
});

function stores(options: { file?: string; database?: Database.Database } = { file }) {
  const clock = new ManualClock();
  const s = createSqliteStores({ ...options, clock });
  open.push(s);
  return { ...s, clock };
}

/** Searches always answered by SQL (FTS5 candidates, core's ranking), never by a partition held decoded. */
class SqlSearchBackend extends SqliteRecordBackend {
  override get ownRanking(): boolean {
    return true;
  }
}

function sqlSearch(at = file): KiokuStores {
  const s = storesOverBackend(new SqlSearchBackend({ file: at }));
  open.push(s);
  return s;
}

/** Creates the facts one after another (the contract has no bulk create). */
async function createAll(facts: FactStore, scope: Scope, inputs: FactInput[]): Promise<Fact[]> {
  const created: Fact[] = [];
  for (const input of inputs) created.push(await facts.create(scope, input));
  return created;
}

/** Fills an empty partition in one write: the facts made in memory, then restored (the bulk path). */
async function fill(facts: FactStore, scope: Scope, inputs: FactInput[]): Promise<void> {
  const made = new InMemoryFactStore();
  for (const input of inputs) await made.create(scope, input);
  await facts.restore(await made.snapshot({ userId: scope.userId }));
}

/** A side channel: a separate plain connection to the same file, reading tables directly. */
function peek(): Database.Database {
  const db = new Database(file, { readonly: true });
  open.push(db);
  return db;
}

/**
 * FTS5's own consistency check of the index (rank 0: its structure; records without search terms are not
 * indexed, so the comparison with the whole content table, rank 1, does not apply).
 */
function checkFtsIntegrity(): void {
  const db = new Database(file);
  open.push(db);
  db.prepare(`INSERT INTO kioku_records_fts(kioku_records_fts, rank) VALUES ('integrity-check', 0)`).run();
}

describe('setup', () => {
  it('touches nothing before setup(); every call fails with a clear STORAGE error until then', async () => {
    const s = stores();
    const error = await expectKiokuError(s.facts.list(randomScope()), 'STORAGE');
    expect(error.message).toContain('setup()');
    await expectKiokuError(s.sessions.create(randomScope()), 'STORAGE');
    await expectKiokuError(s.facts.search(randomScope(), { query: 'x' }), 'STORAGE');
    // An operation never creates the file: only setup() does.
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
    await s.setup();
    expect(existsSync(file)).toBe(true);
    expect(await s.facts.list(randomScope())).toEqual([]);
  });

  it('an existing file without the tables is opened but left as it was, journal mode included', async () => {
    const db = new Database(file);
    open.push(db);
    db.exec('CREATE TABLE app_own (x)');
    const s = stores();
    const error = await expectKiokuError(s.facts.count(randomScope()), 'STORAGE');
    expect(error.message).toContain('setup()');
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([
      'app_own',
    ]);
  });

  it('close() before first use opens nothing; later calls fail with STORAGE', async () => {
    const s = stores();
    await s.close();
    await expectKiokuError(s.facts.list(randomScope()), 'STORAGE');
    await expectKiokuError(s.setup(), 'STORAGE');
    expect(existsSync(file)).toBe(false);
  });

  it('is idempotent: the first call makes the tables, the next ones report nothing done', async () => {
    const s = stores();
    expect(await s.setup()).toEqual({ migrationsApplied: 1, reindexed: false });
    expect(await s.setup()).toEqual({ migrationsApplied: 0, reindexed: false });
    const tables = peek().prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables.every((name) => String(name).startsWith('kioku_'))).toBe(true);
  });

  it('a second connection to a set-up file works without running setup() itself', async () => {
    const a = stores();
    await a.setup();
    const fact = await a.facts.create({ userId: 'u1' }, { content: 'shared file' });
    const b = stores();
    expect(await b.facts.get({ userId: 'u1' }, fact.id)).toEqual(fact);
  });

  it('fills the search columns again when the analyzer changed since they were written', async () => {
    const s = stores();
    await s.setup();
    const fact = await s.facts.create({ userId: 'u1' }, { content: 'User collects vintage stamps' });
    const db = new Database(file);
    open.push(db);
    db.prepare("UPDATE kioku_record_meta SET value = 'older-analyzer' WHERE key = 'analyzer'").run();
    db.prepare("UPDATE kioku_records SET search_terms = 'stale', search_length = 1 WHERE key = ?").run(
      fact.id,
    );
    const fresh = sqlSearch();
    await expectKiokuError(fresh.facts.search({ userId: 'u1' }, { query: 'stamps' }), 'STORAGE');
    expect(await fresh.setup()).toEqual({ migrationsApplied: 0, reindexed: true });
    const hits = await fresh.facts.search({ userId: 'u1' }, { query: 'stamps' });
    expect(hits.map((h) => h.fact.id)).toEqual([fact.id]);
    checkFtsIntegrity();
  });
});

describe('connection', () => {
  it('opens files in WAL mode', async () => {
    await stores().setup();
    expect(peek().pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('works on :memory:, all six stores sharing one connection', async () => {
    const s = stores({ file: ':memory:' });
    await s.setup();
    const scope = { userId: 'u1', threadId: 't1' };
    await s.facts.create(scope, { content: 'likes tea' });
    await s.documents.create(scope, { title: 'Doc', text: 'Some knowledge.' });
    await s.plans.create(scope, { goal: 'Ship it', steps: ['build'] });
    await s.working.set(scope, 'session/s1/note', 'remember the milk');
    const session = await s.sessions.create(scope);
    await s.sessions.kvSet(scope, session.id, 'k', 'v');
    await s.details.create(scope, { description: 'output', content: 'tool output' });
    expect((await s.facts.search(scope, { query: 'tea' }))[0]?.fact.content).toBe('likes tea');
    expect((await s.documents.search(scope, { query: 'knowledge' }))[0]?.title).toBe('Doc');
    expect((await s.plans.get(scope))?.goal).toBe('Ship it');
    expect((await s.working.search(scope, { query: 'milk' }))[0]?.entry.key).toBe('session/s1/note');
    expect(await s.sessions.kvGet(scope, session.id, 'k')).toMatchObject({ value: 'v', version: 1 });
    expect((await s.details.search(scope, { query: 'tool' }))[0]?.detail.content).toBe('tool output');
  });

  it('accepts an open better-sqlite3 database and leaves it open on close()', async () => {
    const db = new Database(file);
    open.push(db);
    const s = stores({ database: db });
    await s.setup();
    await s.facts.create({ userId: 'u1' }, { content: 'x' });
    await s.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT count(*) FROM kioku_records WHERE key <> ''").pluck().get()).toBe(1);
  });

  it('a file that is not a SQLite database is named as such, for reads and for setup()', async () => {
    writeFileSync(file, '{"facts": []}\n');
    const s = stores();
    const read = await expectKiokuError(s.facts.list({ userId: 'u1' }), 'STORAGE');
    expect(read.message).toContain(`${file} is not a SQLite database`);
    expect(read.message).not.toMatch(/setup\(\)/);
    const setup = await expectKiokuError(s.setup(), 'STORAGE');
    expect(setup.message).toContain(`${file} is not a SQLite database`);
    // Nothing overwrote the file.
    expect(readFileSync(file, 'utf8')).toBe('{"facts": []}\n');
  });

  it('close() is idempotent; closed stores fail with STORAGE; the data is there for the next connection', async () => {
    const s = stores();
    await s.setup();
    await s.facts.create({ userId: 'u1' }, { content: 'kept' });
    await s.close();
    await s.close();
    await expectKiokuError(s.facts.list({ userId: 'u1' }), 'STORAGE');
    expect((await stores().facts.list({ userId: 'u1' })).map((f) => f.content)).toEqual(['kept']);
  });

  it('refuses both or neither of file and database', () => {
    expect(() => createSqliteStores({})).toThrow(/exactly one/);
    expect(() => createSqliteStores({ file, database: new Database(':memory:') })).toThrow(/exactly one/);
  });
});

describe('full-text search stays in step with the records', () => {
  it('for every searched kind, through writes, overwrites, deletes, restores and erasure', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', agentId: 'a1', threadId: 't1' };
    const fact = await s.facts.create(scope, { content: 'User collects vintage stamps' });
    await s.facts.update(scope, fact.id, { content: 'User collects vinyl records' });
    const doc = await s.documents.create(scope, {
      title: 'Handbook',
      text: 'Vacation is 28 days.\n\nSick leave.',
    });
    await s.documents.delete(scope, doc.id);
    await s.documents.create(scope, { title: 'Handbook', text: 'Parental leave is 16 weeks.' });
    const detail = await s.details.create(scope, { description: 'log', content: 'error log' });
    await s.details.deactivate(scope, detail.id);
    const snapshot = await s.facts.snapshot({ userId: 'u1' });
    await s.facts.create(scope, { content: 'to be replaced' });
    await s.facts.restore(snapshot);
    await s.facts.create({ userId: 'u2' }, { content: 'Bob collects stamps' });
    const db = peek();
    checkFtsIntegrity();
    const matches = (term: string) =>
      db
        .prepare('SELECT count(*) FROM kioku_records_fts WHERE kioku_records_fts MATCH ?')
        .pluck()
        .get(quoteFts(term));
    expect([matches('stamp'), matches('vinyl'), matches('vacat'), matches('parent')]).toEqual([1, 1, 0, 1]);
    const fresh = sqlSearch();
    expect((await fresh.facts.search(scope, { query: 'vintage stamps' })).map((h) => h.fact.id)).toEqual([]);
    expect((await fresh.documents.search(scope, { query: 'parental leave' }))[0]?.chunk.text).toContain(
      '16 weeks',
    );
    await s.facts.eraseUser('u2');
    expect(matches('stamp')).toBe(0);
    checkFtsIntegrity();
  });
});

describe('SQL and FTS metacharacters are data', () => {
  const nasty = [
    `Robert'); DROP TABLE kioku_records; --`,
    'say "hello" NEAR(world) * prefix* col:value ^start -minus +plus (paren OR NOT AND)',
    'NEAR AND OR NOT',
    '%_\\ LIKE wildcards % and _ and \\',
    `'; DELETE FROM kioku_records WHERE '1'='1`,
    'naïve café — 東京 🔑 \u200b',
  ];

  it('quoteFts quotes every term; ftsExpression never lets user text become syntax', () => {
    expect(quoteFts('a"b')).toBe('"a""b"');
    expect(ftsExpression('pABC', ['near', 'x"y'])).toBe(
      'search_scope : "pABC" AND search_terms : ("near" OR "x""y")',
    );
  });

  it('stores content, keys and queries full of metacharacters verbatim and finds them', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    const created = [];
    for (const content of nasty)
      created.push(await s.facts.create(scope, { content, tags: [content.slice(0, 20)] }));
    for (const fact of created) expect(await s.facts.get(scope, fact.id)).toEqual(fact);
    const fresh = sqlSearch();
    for (const [i, content] of nasty.entries()) {
      const hits = await fresh.facts.search(scope, { query: content, limit: 10 });
      expect(hits.map((h) => h.fact.id)).toContain(created[i]!.id);
    }
    // Queries that are nothing but syntax match nothing and do not fail.
    for (const query of ['"', '*', ':', '(', ')', 'NEAR(', '^', '"unbalanced', 'a:b:c', "'"]) {
      await expect(fresh.facts.search(scope, { query })).resolves.toBeInstanceOf(Array);
    }
    const session = await s.sessions.create(scope);
    for (const key of nasty) await s.sessions.kvSet(scope, session.id, key, key);
    for (const key of nasty) expect((await s.sessions.kvGet(scope, session.id, key))?.value).toBe(key);
    await s.details.create(scope, { description: nasty[1]!, content: nasty[0]! });
    expect((await fresh.details.search(scope, { query: 'Robert DROP' }))[0]?.detail.content).toBe(nasty[0]);
    expect(await fresh.facts.count(scope)).toBe(nasty.length);
  });
});

describe('large values', () => {
  it('a 256 KB value (within the 400 KB record limit) round-trips intact through every kind that holds text', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', threadId: 't1' };
    const alphabet = 'abcdefghij klmnopq\n"\'; ü東';
    const mb = Array.from({ length: 256 * 1024 }, (_, i) => alphabet[i % alphabet.length]).join('');
    const fact = await s.facts.create(scope, { content: mb });
    const detail = await s.details.create(scope, { description: 'big', content: mb });
    await s.working.set(scope, 'session/s1/big', mb);
    const session = await s.sessions.create(scope);
    await s.sessions.kvSet(scope, session.id, 'big', mb);
    await s.sessions.transcriptAppend(scope, session.id, { role: 'tool', content: mb });
    // Documents get paragraphs: core's chunker is quadratic on long text without any break.
    const paragraphs = mb.replace(/(.{1023})./gs, '$1\n\n').slice(0, mb.length);
    const doc = await s.documents.create(scope, { title: 'Big', text: paragraphs });
    // Read back by a new connection: what is on disk is the value.
    const fresh = stores();
    expect((await fresh.facts.get(scope, fact.id))?.content).toBe(mb);
    expect((await fresh.details.get(scope, detail.id))?.content).toBe(mb);
    expect((await fresh.working.get(scope, 'session/s1/big'))?.value).toBe(mb);
    expect((await fresh.sessions.kvGet(scope, session.id, 'big'))?.value).toBe(mb);
    expect((await fresh.sessions.transcriptReadLast(scope, session.id, 1))[0]?.content).toBe(mb);
    expect((await fresh.documents.get(scope, doc.id))?.text).toBe(paragraphs);
  });
});

describe('partitions of different sizes', () => {
  it('a partition holding most of the table (ranked through a join) and a small one find only their own facts, in the same order', async () => {
    const s = stores();
    await s.setup();
    const big = { userId: 'big' };
    const small = { userId: 'small', agentId: 'a1' };
    const topics = ['chess on weekends', 'the cello in an orchestra', 'chess puzzles daily', 'tennis'];
    // `big` holds 12 of 14 rows (the join path), `small` 2 of 14 (the partition in the MATCH).
    for (let i = 0; i < 12; i++) {
      await s.facts.create(big, {
        id: `b${i}`,
        content: `User plays ${topics[i % topics.length]}`,
        category: i % 2 ? 'hobbies/games' : 'music',
      });
    }
    await s.facts.create(small, {
      id: 's0',
      content: 'User plays chess with a friend',
      category: 'hobbies/games',
    });
    await s.facts.create(small, { id: 's1', content: 'User listens to cello music' });
    const sql = sqlSearch();
    const bigHits = await sql.facts.search(big, { query: 'chess', limit: 20 });
    expect(bigHits.every((h) => h.fact.userId === 'big')).toBe(true);
    expect(
      bigHits
        .slice(0, 6)
        .map((h) => h.fact.id)
        .sort(),
    ).toEqual(['b0', 'b10', 'b2', 'b4', 'b6', 'b8']);
    const games = await sql.facts.search(big, { query: 'chess tennis', category: 'hobbies', limit: 20 });
    expect(games.length).toBeGreaterThan(0);
    expect(games.every((h) => h.fact.userId === 'big' && h.fact.category === 'hobbies/games')).toBe(true);
    expect(games[0]?.fact.content).toContain('tennis');
    const smallHits = await sql.facts.search(small, { query: 'chess', limit: 20 });
    expect(smallHits[0]?.fact.id).toBe('s0');
    expect(smallHits.every((h) => h.fact.userId === 'small')).toBe(true);
    // The same order as when the partition is the whole table: a copy of `big` alone in a fresh database.
    const aloneFile = path.join(dir, 'alone.db');
    const alone = createSqliteStores({ file: aloneFile });
    open.push(alone);
    await alone.setup();
    await alone.facts.restore(await s.facts.snapshot({ userId: 'big' }));
    const aloneSql = sqlSearch(aloneFile);
    for (const query of ['chess', 'cello orchestra', 'plays chess puzzles', 'tennis weekends']) {
      const here = (await sql.facts.search(big, { query, limit: 20 })).map((h) => [h.fact.id, h.score]);
      const there = (await aloneSql.facts.search(big, { query, limit: 20 })).map((h) => [h.fact.id, h.score]);
      expect(here).toEqual(there);
    }
  });
});

describe('search statistics and caches', () => {
  /** `kioku_record_search_stats` of the records table: [rows, terms] by scope. */
  const statsOf = (db: Database.Database) =>
    Object.fromEntries(
      (
        db
          .prepare(
            "SELECT scope, rows, terms FROM kioku_record_search_stats WHERE table_name = 'kioku_records'",
          )
          .raw()
          .all() as Array<[string, number, number]>
      ).map(([scope, rows, terms]) => [scope, [rows, terms]]),
    );

  it("scope '' holds the table's totals: the sums of its partitions, through every kind of write", async () => {
    const s = stores();
    await s.setup();
    const a = { userId: 'u1', threadId: 't1' };
    const b = { userId: 'u2', agentId: 'x', threadId: 't1' };
    const f = await createAll(s.facts, a, [{ content: 'one fact' }, { content: 'two facts here' }]);
    await s.facts.create(b, { content: 'other partition' });
    await s.facts.update(a, f[0]!.id, { content: 'one fact, longer now' });
    await s.facts.delete(a, f[1]!.id);
    await s.facts.restore(await s.facts.snapshot({ userId: 'u2' }));
    await s.documents.create(a, { title: 'Doc', text: 'Some knowledge.\n\nMore of it.' });
    await s.details.create(b, { description: 'log', content: 'error log' });
    const db = peek();
    const stats = statsOf(db);
    const partitions = Object.entries(stats).filter(([scope]) => scope !== '');
    expect(partitions.length).toBe(4); // u1's facts and chunks, u2's facts and details
    expect(stats['']).toEqual([
      partitions.reduce((n, [, v]) => n + (v[0] ?? 0), 0),
      partitions.reduce((n, [, v]) => n + (v[1] ?? 0), 0),
    ]);
    const direct = db
      .prepare('SELECT count(*), total(search_length) FROM kioku_records WHERE search_terms IS NOT NULL')
      .raw()
      .get();
    expect(stats['']).toEqual(direct);
  });

  // Document frequencies of a small partition are counted whole; of a large one (over 100,000 terms),
  // term by term: both must follow every write made elsewhere.
  it.each([
    ['a small partition', 200],
    ['a large partition', 17_000],
  ])(
    'a search in %s sees every write of another connection, with the scores a fresh connection computes',
    async (_, size) => {
      const s = stores();
      await s.setup();
      const scope = { userId: 'u1' };
      const words = ['chess', 'cello', 'tennis', 'garden', 'painting', 'hiking', 'baking', 'poetry'];
      const text = (i: number) =>
        `User enjoys ${words[i % 8]} and ${words[(i * 3 + 1) % 8]} with friend number ${i % 13}`;
      await fill(
        s.facts,
        scope,
        Array.from({ length: size }, (_, i) => ({ id: `f${i}`, content: text(i) })),
      );
      const terms = Math.max(...Object.values(statsOf(peek())).map((v) => v[1] ?? 0));
      expect(terms > 100_000).toBe(size > 1000);
      const queries = ['chess with a friend', 'cello and tennis', 'baking poetry garden', 'friend number 7'];
      const results = async (store: KiokuStores) => {
        const out: Array<Array<[string, number]>> = [];
        for (const query of queries) {
          out.push((await store.facts.search(scope, { query, limit: 20 })).map((h) => [h.fact.id, h.score]));
        }
        return out;
      };
      const searcher = sqlSearch();
      await results(searcher); // fills the caches
      const writes: Array<() => Promise<unknown>> = [
        () => s.facts.create(scope, { id: 'n1', content: 'User enjoys chess with friend number 7' }),
        () => createAll(s.facts, scope, [{ content: 'cello tennis cello' }, { content: 'baking' }]),
        () => s.facts.create({ userId: 'u2' }, { content: 'chess chess chess' }),
        () => s.facts.update(scope, 'f3', { content: 'User gave up poetry for chess' }),
        () => s.facts.delete(scope, 'f4'),
        () => s.facts.delete(scope, 'n1'),
        () => s.facts.create(scope, { id: 'n1', content: 'User enjoys cello' }),
        () =>
          fill(
            s.facts,
            { userId: 'u3' },
            Array.from({ length: 1100 }, (_, i) => ({ content: text(i) })),
          ),
      ];
      for (const write of writes) {
        await write();
        expect(await results(searcher)).toEqual(await results(sqlSearch()));
      }
    },
  );

  it("with few matching rows, the ranking is core's LexicalIndex exactly (ids and scores, bit for bit)", async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', agentId: 'a1' };
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
    const inputs = Array.from({ length: 150 }, (_, i) => ({
      id: `f${i}`,
      content: Array.from({ length: 3 + (i % 7) }, (_, j) => words[(i * 7 + j * j * 3) % 12]).join(' '),
    }));
    const created = await createAll(s.facts, scope, inputs);
    await s.facts.create({ userId: 'u2' }, { content: 'alpha beta gamma in another partition' });
    const core = new LexicalIndex();
    for (const fact of created) core.set(fact.id, factSearchText(fact));
    const sql = sqlSearch();
    for (const query of [
      'alpha',
      'beta gamma',
      'delta epsilon zeta',
      'mu lambda kappa iota',
      'theta alpha',
    ]) {
      const expected = core.search(query, { limit: 30 }).map((h) => [h.id, h.score]);
      const got = (await sql.facts.search(scope, { query, limit: 30 })).map((h) => [h.fact.id, h.score]);
      // The same ids and the same scores to the last bit: one scoring rule (core's), summed in one order.
      expect(got).toEqual(expected);
    }
  });

  it('a partition whose words match thousands of rows still finds the facts that cover the query', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    // "user" and "likes" are in every fact, "music" in every other one: far past the exact and bm25 budgets.
    await fill(
      s.facts,
      scope,
      Array.from({ length: 12_000 }, (_, i) => ({
        content: `User likes ${i % 2 ? 'music' : 'sports'} number ${i % 500}`,
      })),
    );
    const target = await s.facts.create(scope, { content: 'User likes jazz music and jazz clubs' });
    const sql = sqlSearch();
    const hits = await sql.facts.search(scope, { query: 'which jazz music does the user like?' });
    expect(hits[0]?.fact.id).toBe(target.id);
    const common = await sql.facts.search(scope, { query: 'user likes music', limit: 20 });
    expect(common).toHaveLength(20);
    expect(common.every((h) => /music/.test(h.fact.content))).toBe(true);
  });
});
