import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { factSearchText, LexicalIndex } from '@kioku/core/adapter';
import { ManualClock } from '@kioku/core/testing';
import { expectKiokuError, randomScope } from '@kioku/store-test-suite';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createSqliteNativeStores,
  MIGRATIONS_FOLDER,
  MIGRATIONS_TABLE,
  SqliteConnection,
  SqliteFactStore,
  SqliteSessionStore,
  SqliteWorkingMemoryStore,
} from '../src/index.js';
import { ftsExpression, quoteFts, scopeToken } from '../src/search.js';

const FTS_TABLES = ['kioku_facts_fts', 'kioku_document_chunks_fts', 'kioku_working_fts', 'kioku_details_fts'];

let dir: string;
let file: string;
const open: Array<{ close(): void }> = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-'));
  file = path.join(dir, 'kioku.db');
});

afterEach(() => {
  for (const o of open.splice(0)) o.close();
  rmSync(dir, { recursive: true, force: true });
});

function stores(options: { file?: string; database?: Database.Database } = { file }) {
  const clock = new ManualClock();
  const s = createSqliteNativeStores({ ...options, clock });
  open.push(s);
  return { ...s, clock };
}

/** A side channel: a separate plain connection to the same file, reading tables directly. */
function peek(): Database.Database {
  const db = new Database(file, { readonly: true });
  open.push(db);
  return db;
}

/** FTS5's own consistency check: throws when an index differs from its content table. */
function checkFtsIntegrity(db: Database.Database): void {
  for (const fts of FTS_TABLES)
    db.prepare(`INSERT INTO ${fts}(${fts}, rank) VALUES ('integrity-check', 1)`).run();
}

describe('setup and migrations', () => {
  it('touches nothing before setup(); every call fails with a clear STORAGE error until then', async () => {
    const s = stores();
    expect(s.connection.open).toBe(false);
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

  it('an existing file without the schema is opened but left as it was, journal mode included', async () => {
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
    s.close();
    await expectKiokuError(s.facts.list(randomScope()), 'STORAGE');
    await expectKiokuError(s.setup(), 'STORAGE');
    expect(existsSync(file)).toBe(false);
  });

  it('is idempotent and records migrations in __kioku_migrations only', async () => {
    const s = stores();
    const first = await s.setup();
    expect(first.migrationsApplied).toBeGreaterThanOrEqual(2);
    const second = await s.setup();
    expect(second).toEqual({ migrationsApplied: 0, reindexed: false });
    expect(MIGRATIONS_TABLE).toBe('__kioku_migrations');
    const names = peek()
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '__%' ESCAPE '!'")
      .pluck()
      .all();
    expect(names).toContain('__kioku_migrations');
    expect(names).not.toContain('__drizzle_migrations');
    expect(peek().prepare(`SELECT count(*) FROM ${MIGRATIONS_TABLE}`).pluck().get()).toBe(
      first.migrationsApplied,
    );
  });

  it('a second connection to a set-up file works without running setup() itself', async () => {
    const a = stores();
    await a.setup();
    const fact = await a.facts.create({ userId: 'u1' }, { content: 'shared file' });
    const b = stores();
    expect(await b.facts.get({ userId: 'u1' }, fact.id)).toEqual(fact);
  });

  it('rebuilds the search terms when the analyzer changed since they were written', async () => {
    const s = stores();
    await s.setup();
    const fact = await s.facts.create({ userId: 'u1' }, { content: 'User collects vintage stamps' });
    const db = new Database(file);
    open.push(db);
    db.prepare("UPDATE kioku_meta SET value = 'older-analyzer' WHERE key = 'analyzer'").run();
    db.prepare("UPDATE kioku_facts SET search_terms = 'stale', search_length = 1").run();
    const fresh = stores();
    await expectKiokuError(fresh.facts.search({ userId: 'u1' }, { query: 'stamps' }), 'STORAGE');
    expect(await fresh.setup()).toEqual({ migrationsApplied: 0, reindexed: true });
    const hits = await fresh.facts.search({ userId: 'u1' }, { query: 'stamps' });
    expect(hits.map((h) => h.fact.id)).toEqual([fact.id]);
    checkFtsIntegrity(db);
  });
});

describe('connection', () => {
  it('opens files in WAL mode with a busy timeout', async () => {
    const s = stores();
    await s.setup();
    expect(s.connection.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.connection.raw.pragma('busy_timeout', { simple: true })).toBe(5000);
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
    const store = new SqliteFactStore({ database: db });
    await store.setup();
    await store.create({ userId: 'u1' }, { content: 'x' });
    store.close();
    expect(db.open).toBe(true);
    expect(db.prepare('SELECT count(*) FROM kioku_facts').pluck().get()).toBe(1);
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

  it('close() is idempotent; a closed store fails with STORAGE', async () => {
    const store = new SqliteFactStore({ file });
    await store.setup();
    store.close();
    store.close();
    await expectKiokuError(store.list({ userId: 'u1' }), 'STORAGE');
    // The data is on disk for the next connection.
    const again = new SqliteFactStore({ file });
    open.push(again);
    expect(await again.list({ userId: 'u1' })).toEqual([]);
  });

  it('refuses both or neither of file and database', () => {
    expect(() => new SqliteConnection({})).toThrow(/exactly one/);
    expect(() => new SqliteConnection({ file, database: new Database(':memory:') })).toThrow(/exactly one/);
  });
});

describe('full-text search stays in step with the rows', () => {
  it('after create, update and delete (checked in the FTS5 tables directly)', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    const fact = await s.facts.create(scope, { content: 'User collects vintage stamps' });
    const db = peek();
    const matches = (term: string) =>
      db
        .prepare('SELECT count(*) FROM kioku_facts_fts WHERE kioku_facts_fts MATCH ?')
        .pluck()
        .get(quoteFts(term));
    expect(matches('stamp')).toBe(1);
    await s.facts.update(scope, fact.id, { content: 'User collects vinyl records' });
    expect(matches('stamp')).toBe(0);
    expect(matches('vinyl')).toBe(1);
    expect((await s.facts.search(scope, { query: 'vintage stamps' })).map((h) => h.fact.id)).toEqual([]);
    expect((await s.facts.search(scope, { query: 'vinyl' })).map((h) => h.fact.id)).toEqual([fact.id]);
    await s.facts.delete(scope, fact.id);
    expect(matches('vinyl')).toBe(0);
    const stats = db
      .prepare("SELECT rows, terms FROM kioku_search_stats WHERE table_name = 'kioku_facts'")
      .get();
    expect(stats).toEqual({ rows: 0, terms: 0 });
    checkFtsIntegrity(s.connection.raw);
  });

  it('for every searchable kind, through writes, overwrites, evictions, restores and sweeps', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', agentId: 'a1', threadId: 't1' };
    const doc = await s.documents.create(scope, {
      title: 'Handbook',
      text: 'Vacation is 28 days.\n\nSick leave.',
    });
    await s.documents.delete(scope, doc.id);
    await s.documents.create(scope, { title: 'Handbook', text: 'Parental leave is 16 weeks.' });
    for (let i = 0; i < 60; i++) await s.working.set(scope, `session/s1/k${i}`, `value number ${i}`);
    await s.working.set(scope, 'session/s1/k59', 'overwritten value');
    const detail = await s.details.create(scope, { description: 'log', content: 'error log' });
    await s.details.deactivate(scope, detail.id);
    const snapshot = await s.facts.snapshot({ userId: 'u1' });
    await s.facts.create(scope, { content: 'to be replaced' });
    await s.facts.restore(snapshot);
    s.clock.advance(10 * 60_000);
    expect(await s.working.sweep()).toBe(50);
    checkFtsIntegrity(s.connection.raw);
    expect(
      peek()
        .prepare('SELECT count(*) FROM kioku_working_fts WHERE kioku_working_fts MATCH ?')
        .pluck()
        .get('"valu"'),
    ).toBe(0);
    expect((await s.documents.search(scope, { query: 'vacation' })).length).toBe(0);
    expect((await s.documents.search(scope, { query: 'parental leave' }))[0]?.chunk.text).toContain(
      '16 weeks',
    );
  });
});

describe('SQL and FTS metacharacters are data', () => {
  const nasty = [
    `Robert'); DROP TABLE kioku_facts; --`,
    'say "hello" NEAR(world) * prefix* col:value ^start -minus +plus (paren OR NOT AND)',
    'NEAR AND OR NOT',
    '%_\\ LIKE wildcards % and _ and \\',
    `'; DELETE FROM kioku_facts WHERE '1'='1`,
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
    for (const [i, content] of nasty.entries()) {
      const hits = await s.facts.search(scope, { query: content, limit: 10 });
      expect(hits.map((h) => h.fact.id)).toContain(created[i]!.id);
    }
    // Queries that are nothing but syntax match nothing and do not fail.
    for (const query of ['"', '*', ':', '(', ')', 'NEAR(', '^', '"unbalanced', 'a:b:c', "'"]) {
      await expect(s.facts.search(scope, { query })).resolves.toBeInstanceOf(Array);
    }
    const session = await s.sessions.create(scope);
    for (const key of nasty) await s.sessions.kvSet(scope, session.id, key, key);
    for (const key of nasty) expect((await s.sessions.kvGet(scope, session.id, key))?.value).toBe(key);
    await s.working.set(scope, 'session/s1/nasty', nasty.join('\n'));
    expect((await s.working.search(scope, { query: 'DROP TABLE' }))[0]?.entry.value).toBe(nasty.join('\n'));
    await s.details.create(scope, { description: nasty[1]!, content: nasty[0]! });
    expect((await s.details.search(scope, { query: 'Robert DROP' }))[0]?.detail.content).toBe(nasty[0]);
    expect(peek().prepare('SELECT count(*) FROM kioku_facts').pluck().get()).toBe(nasty.length);
  });
});

describe('large values', () => {
  it('a 1 MB value round-trips intact through every kind that holds text', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', threadId: 't1' };
    const alphabet = 'abcdefghij klmnopq\n"\'; ü東';
    const mb = Array.from({ length: 1024 * 1024 }, (_, i) => alphabet[i % alphabet.length]).join('');
    expect(mb.length).toBe(1024 * 1024);
    const fact = await s.facts.create(scope, { content: mb });
    expect((await s.facts.get(scope, fact.id))?.content).toBe(mb);
    const detail = await s.details.create(scope, { description: 'big', content: mb });
    expect((await s.details.get(scope, detail.id))?.content).toBe(mb);
    await s.working.set(scope, 'session/s1/big', mb);
    expect((await s.working.get(scope, 'session/s1/big'))?.value).toBe(mb);
    const session = await s.sessions.create(scope);
    await s.sessions.kvSet(scope, session.id, 'big', mb);
    expect((await s.sessions.kvGet(scope, session.id, 'big'))?.value).toBe(mb);
    await s.sessions.transcriptAppend(scope, session.id, { role: 'tool', content: mb });
    expect((await s.sessions.transcriptReadLast(scope, session.id, 1))[0]?.content).toBe(mb);
    // Documents get paragraphs: core's chunker is quadratic on 1 MB without any break (see README).
    const paragraphs = mb.replace(/(.{1023})./gs, '$1\n\n').slice(0, mb.length);
    const doc = await s.documents.create(scope, { title: 'Big', text: paragraphs });
    expect((await s.documents.get(scope, doc.id))?.text).toBe(paragraphs);
    expect(paragraphs.length).toBe(mb.length);
    // Read back through a side channel: the bytes on disk are the value.
    expect(peek().prepare('SELECT content FROM kioku_facts WHERE id = ?').pluck().get(fact.id)).toBe(mb);
    const snapshot = await s.facts.snapshot({ userId: 'u1' });
    expect(snapshot.records[0]?.content).toBe(mb);
  });
});

describe('ranking option', () => {
  it('bm25 ranking uses FTS5 order directly and still finds the relevant fact', async () => {
    const store = new SqliteFactStore({ file, search: { ranking: 'bm25' } });
    open.push(store);
    await store.setup();
    const scope = { userId: 'u1' };
    await store.create(scope, { content: 'User plays chess on weekends' });
    const cello = await store.create(scope, { content: 'User plays the cello in an orchestra' });
    const hits = await store.search(scope, { query: 'cello orchestra' });
    expect(hits[0]?.fact.id).toBe(cello.id);
    expect(hits[0]!.score).toBeGreaterThan(0);
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
    const bigHits = await s.facts.search(big, { query: 'chess', limit: 20 });
    expect(bigHits.every((h) => h.fact.userId === 'big')).toBe(true);
    expect(
      bigHits
        .slice(0, 6)
        .map((h) => h.fact.id)
        .sort(),
    ).toEqual(['b0', 'b10', 'b2', 'b4', 'b6', 'b8']);
    const games = await s.facts.search(big, { query: 'chess tennis', category: 'hobbies', limit: 20 });
    expect(games.length).toBeGreaterThan(0);
    expect(games.every((h) => h.fact.userId === 'big' && h.fact.category === 'hobbies/games')).toBe(true);
    expect(games[0]?.fact.content).toContain('tennis');
    const smallHits = await s.facts.search(small, { query: 'chess', limit: 20 });
    expect(smallHits[0]?.fact.id).toBe('s0');
    expect(smallHits.every((h) => h.fact.userId === 'small')).toBe(true);
    // The same order as when the partition is the whole table: a copy of `big` alone in a fresh database.
    const alone = new SqliteFactStore({ file: path.join(dir, 'alone.db') });
    open.push(alone);
    await alone.setup();
    await alone.restore(await s.facts.snapshot({ userId: 'big' }));
    for (const query of ['chess', 'cello orchestra', 'plays chess puzzles', 'tennis weekends']) {
      const here = (await s.facts.search(big, { query, limit: 20 })).map((h) => [h.fact.id, h.score]);
      const there = (await alone.search(big, { query, limit: 20 })).map((h) => [h.fact.id, h.score]);
      expect(here).toEqual(there);
    }
  });
});

describe('newest-updated pages and counts', () => {
  /** Every SQL statement a store runs, through better-sqlite3's `verbose` hook on a connection we open. */
  function traced() {
    const statements: string[] = [];
    const db = new Database(file, { verbose: (message) => statements.push(String(message)) });
    open.push(db);
    return { store: new SqliteFactStore({ database: db }), db, statements };
  }

  it("list({ order: 'updated' }) walks the kioku_facts_updated index: no sort, whatever the page", async () => {
    const { store, db, statements } = traced();
    await store.setup();
    const scope = { userId: 'u1', agentId: 'a1' };
    await store.createMany(
      scope,
      Array.from({ length: 50 }, (_, i) => ({ content: `fact ${i}`, tags: [`t${i % 3}`] })),
    );
    for (const options of [
      { order: 'updated' as const, limit: 128, offset: 0 },
      { order: 'updated' as const, limit: 128, offset: 20 },
      { order: 'updated' as const, tags: ['t1'], limit: 5 },
    ]) {
      statements.length = 0;
      await store.list(scope, options);
      const select = statements.find((s) => s.startsWith('select'))!;
      const params = select.split('?').length - 1;
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${select}`)
        .all(...Array.from({ length: params }, () => 'x'))
        .map((row) => (row as { detail: string }).detail)
        .join('\n');
      expect(plan).toContain('USING INDEX kioku_facts_updated');
      expect(plan).not.toContain('TEMP B-TREE');
    }
  });

  it('ids tie-break in code-unit order, not case-insensitively', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    await s.facts.createMany(scope, [
      { id: 'b', content: 'b' },
      { id: 'B', content: 'B' },
      { id: 'a', content: 'a' },
      { id: '_', content: '_' },
    ]);
    const ids = (await s.facts.list(scope, { order: 'updated' })).map((f) => f.id);
    expect(ids).toEqual(['B', '_', 'a', 'b']);
  });

  it('count() agrees with the table read directly, through creates, moves, deletes and restores', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    const other = { userId: 'u1', agentId: 'a1' };
    const direct = (agentId: string) =>
      peek()
        .prepare('SELECT count(*) FROM kioku_facts WHERE user_id = ? AND agent_id = ?')
        .pluck()
        .get('u1', agentId);
    const created = await s.facts.createMany(
      scope,
      Array.from({ length: 30 }, (_, i) => ({ content: `fact ${i}` })),
    );
    await s.facts.create(other, { content: 'agent fact' });
    expect(await s.facts.count(scope)).toBe(direct(''));
    expect(await s.facts.count(scope)).toBe(30);
    await s.facts.delete(scope, created[0]!.id);
    await s.facts.update(scope, created[1]!.id, { content: 'changed' });
    expect(await s.facts.count(scope)).toBe(direct(''));
    await s.facts.restore(await s.facts.snapshot({ userId: 'u1' }));
    expect(await s.facts.count(scope)).toBe(29);
    expect(await s.facts.count(other)).toBe(direct('a1'));
    expect(await s.facts.count({ userId: 'nobody' })).toBe(0);
  });
});

describe('document revision', () => {
  it('moves with writes the chunk triggers do not see: a document without chunks, a raw update', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1', agentId: 'a1' };
    const seen = new Set([await s.documents.revision(scope)]);
    const moved = async () => {
      const revision = await s.documents.revision(scope);
      expect(seen.has(revision), `revision ${revision} came back`).toBe(false);
      seen.add(revision);
    };
    const doc = await s.documents.create(scope, { id: 'guide', title: 'Guide', text: 'Some knowledge.' });
    await moved();
    // A snapshot may hold a document without chunks: restoring it is a write all the same.
    const snapshot = await s.documents.snapshot({ userId: 'u1' });
    await s.documents.restore({ ...snapshot, records: [{ ...doc, chunks: [] }] });
    await moved();
    expect((await s.documents.list(scope))[0]?.chunks).toEqual([]);
    await s.documents.restore({ ...snapshot, records: [{ ...doc, title: 'Renamed', chunks: [] }] });
    await moved();
    // Another process editing the row directly.
    const db = new Database(file);
    open.push(db);
    db.prepare("UPDATE kioku_documents SET title = 'Edited' WHERE id = 'guide'").run();
    await moved();
    const unchanged = await s.documents.revision(scope);
    await s.documents.create({ userId: 'u2' }, { title: 'Other', text: 'Not this partition.' });
    expect(await s.documents.revision(scope)).toBe(unchanged);
  });
});

/** `kioku_search_stats` of one table, read directly: scope -> [rows, terms]. */
function statsOf(db: Database.Database, table: string): Record<string, [number, number]> {
  const rows = db
    .prepare('SELECT scope, rows, terms FROM kioku_search_stats WHERE table_name = ?')
    .all(table) as Array<{ scope: string; rows: number; terms: number }>;
  return Object.fromEntries(
    rows.filter((r) => r.rows > 0 || r.scope === '').map((r) => [r.scope, [r.rows, r.terms]]),
  );
}

describe('search statistics and caches', () => {
  it("scope '' holds each table's totals: the sums of its partitions, through every kind of write", async () => {
    const s = stores();
    await s.setup();
    const a = { userId: 'u1', threadId: 't1' };
    const b = { userId: 'u2', agentId: 'x', threadId: 't1' };
    const f = await s.facts.createMany(a, [{ content: 'one fact' }, { content: 'two facts here' }]);
    await s.facts.create(b, { content: 'other partition' });
    await s.facts.update(a, f[0]!.id, { content: 'one fact, longer now' });
    await s.facts.delete(a, f[1]!.id);
    await s.facts.restore(await s.facts.snapshot({ userId: 'u2' }));
    await s.documents.create(a, { title: 'Doc', text: 'Some knowledge.\n\nMore of it.' });
    await s.working.set(a, 'session/s1/k', 'a value');
    await s.details.create(b, { description: 'log', content: 'error log' });
    const db = peek();
    for (const table of ['kioku_facts', 'kioku_document_chunks', 'kioku_working', 'kioku_details']) {
      const stats = statsOf(db, table);
      const partitions = Object.entries(stats).filter(([scope]) => scope !== '');
      expect(partitions.length).toBeGreaterThan(0);
      expect(stats['']).toEqual([
        partitions.reduce((n, [, v]) => n + v[0], 0),
        partitions.reduce((n, [, v]) => n + v[1], 0),
      ]);
      const direct = db.prepare(`SELECT count(*), total(search_length) FROM ${table}`).raw().get();
      expect(stats['']).toEqual(direct);
    }
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
      await s.facts.createMany(
        scope,
        Array.from({ length: size }, (_, i) => ({ id: `f${i}`, content: text(i) })),
      );
      const db = new Database(file, { readonly: true });
      const terms = db
        .prepare("SELECT terms FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope != ''")
        .pluck()
        .get() as number;
      db.close();
      expect(terms > 100_000).toBe(size > 1000);
      const queries = ['chess with a friend', 'cello and tennis', 'baking poetry garden', 'friend number 7'];
      const results = async (store: SqliteFactStore) => {
        const out: Array<Array<[string, number]>> = [];
        for (const query of queries) {
          out.push((await store.search(scope, { query, limit: 20 })).map((h) => [h.fact.id, h.score]));
        }
        return out;
      };
      await results(s.facts); // fills the caches
      const other = new SqliteFactStore({ file });
      open.push(other);
      const writes: Array<() => Promise<unknown>> = [
        () => other.create(scope, { id: 'n1', content: 'User enjoys chess with friend number 7' }),
        () => other.createMany(scope, [{ content: 'cello tennis cello' }, { content: 'baking' }]),
        () => other.create({ userId: 'u2' }, { content: 'chess chess chess' }),
        () => other.update(scope, 'f3', { content: 'User gave up poetry for chess' }),
        () => other.delete(scope, 'f4'),
        () => other.delete(scope, 'n1'),
        () => other.create(scope, { id: 'n1', content: 'User enjoys cello' }),
        () =>
          other.createMany(
            { userId: 'u3' },
            Array.from({ length: 1100 }, (_, i) => ({ content: text(i) })),
          ),
        () => s.facts.create(scope, { content: 'garden poetry friend' }),
      ];
      for (const write of writes) {
        await write();
        const fresh = new SqliteFactStore({ file });
        open.push(fresh);
        expect(await results(s.facts)).toEqual(await results(fresh));
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
    const created = await s.facts.createMany(scope, inputs);
    await s.facts.create({ userId: 'u2' }, { content: 'alpha beta gamma in another partition' });
    const core = new LexicalIndex();
    for (const fact of created) core.set(fact.id, factSearchText(fact));
    for (const query of [
      'alpha',
      'beta gamma',
      'delta epsilon zeta',
      'mu lambda kappa iota',
      'theta alpha',
    ]) {
      const expected = core.search(query, { limit: 30 }).map((h) => [h.id, h.score]);
      const got = (await s.facts.search(scope, { query, limit: 30 })).map((h) => [h.fact.id, h.score]);
      // The same ids and the same scores to the last bit: one scoring rule (core's), summed in one order.
      expect(got).toEqual(expected);
    }
  });

  it('a partition whose words match thousands of rows still finds the facts that cover the query', async () => {
    const s = stores();
    await s.setup();
    const scope = { userId: 'u1' };
    // "user" and "likes" are in every fact, "music" in every other one: far past the exact and bm25 budgets.
    await s.facts.createMany(
      scope,
      Array.from({ length: 12_000 }, (_, i) => ({
        content: `User likes ${i % 2 ? 'music' : 'sports'} number ${i % 500}`,
      })),
    );
    const target = await s.facts.create(scope, { content: 'User likes jazz music and jazz clubs' });
    const hits = await s.facts.search(scope, { query: 'which jazz music does the user like?' });
    expect(hits[0]?.fact.id).toBe(target.id);
    const common = await s.facts.search(scope, { query: 'user likes music', limit: 20 });
    expect(common).toHaveLength(20);
    expect(common.every((h) => /music/.test(h.fact.content))).toBe(true);
  });
});

describe('upgrades', () => {
  it('setup() brings a database made by the first release (migrations 0000-0001) up to date, data kept', async () => {
    const db = new Database(file);
    open.push(db);
    const old = path.join(dir, 'old-migrations');
    mkdirSync(path.join(old, 'meta'), { recursive: true });
    const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'));
    const released = journal.entries.length;
    journal.entries = journal.entries.slice(0, 2);
    writeFileSync(path.join(old, 'meta/_journal.json'), JSON.stringify(journal));
    for (const entry of journal.entries) {
      copyFileSync(path.join(MIGRATIONS_FOLDER, `${entry.tag}.sql`), path.join(old, `${entry.tag}.sql`));
    }
    migrate(drizzle(db), { migrationsFolder: old, migrationsTable: MIGRATIONS_TABLE });
    db.prepare(
      `INSERT INTO kioku_facts (user_id, agent_id, id, content, category, tags, metadata, provenance,
         created_at, updated_at, search_terms, search_length)
       VALUES ('u1', '', 'f1', 'old fact', 'general', '[]', '{}', '{}', '2026-01-01T00:00:00.000Z',
         '2026-01-01T00:00:00.000Z', 'old fact', 2)`,
    ).run();
    const expiresMs = Date.now() + 60 * 60_000;
    db.prepare(
      `INSERT INTO kioku_working (user_id, agent_id, key, namespace, value, stored_at, expires_at, expires_ms,
         tags, search_terms, search_length)
       VALUES ('u1', '', 'session/s1/note', 'session/s1', 'old note', '2026-01-01T00:00:00.000Z', ?, ?,
         '[]', 'old note', 2)`,
    ).run(new Date(expiresMs).toISOString(), expiresMs);
    const sessionId = '01890000-0000-7000-8000-000000000001';
    db.prepare(
      `INSERT INTO kioku_sessions (seq, user_id, agent_id, id, store_types, metadata, created_at)
       VALUES (1, 'u1', '', ?, '["basic_session"]', '{}', '2026-01-01T00:00:00.000Z')`,
    ).run(sessionId);
    db.prepare(
      `INSERT INTO kioku_session_kv (session_seq, position, key, value, ts)
       VALUES (1, 1, 'city', 'Lisbon', '2026-01-01T00:00:00.000Z')`,
    ).run();
    const store = new SqliteFactStore({ file });
    open.push(store);
    await expectKiokuError(store.count({ userId: 'u1' }), 'STORAGE');
    const report = await store.setup();
    expect(report.migrationsApplied).toBe(released - 2);
    expect(await store.count({ userId: 'u1' })).toBe(1);
    expect((await store.list({ userId: 'u1' }, { order: 'updated' }))[0]?.id).toBe('f1');
    // Rows stored before versions existed read as version 1 (facts, working memory, session k-v alike).
    expect((await store.get({ userId: 'u1' }, 'f1'))?.version).toBe(1);
    const working = new SqliteWorkingMemoryStore({ file });
    open.push(working);
    expect(await working.get({ userId: 'u1' }, 'session/s1/note')).toMatchObject({
      value: 'old note',
      version: 1,
    });
    expect(
      (await working.set({ userId: 'u1' }, 'session/s1/note', 'new', { expectedVersion: 1 })).version,
    ).toBe(2);
    const sessions = new SqliteSessionStore({ file });
    open.push(sessions);
    expect(await sessions.kvGet({ userId: 'u1' }, sessionId, 'city')).toMatchObject({
      value: 'Lisbon',
      version: 1,
    });
    expect(
      (await sessions.kvSet({ userId: 'u1' }, sessionId, 'city', 'Porto', { expectedVersion: 1 })).version,
    ).toBe(2);
    // The table totals (scope '') start from the partitions' rows, and the new triggers keep them.
    await store.create({ userId: 'u2' }, { content: 'newer fact here' });
    expect(statsOf(db, 'kioku_facts')).toEqual({
      '': [2, 5],
      [scopeToken('u1', '')]: [1, 2],
      [scopeToken('u2', '')]: [1, 3],
    });
    const columns = db
      .prepare("SELECT name, desc FROM pragma_index_xinfo('kioku_facts_updated') WHERE key = 1")
      .all();
    expect(columns).toEqual([
      { name: 'user_id', desc: 0 },
      { name: 'agent_id', desc: 0 },
      { name: 'updated_at', desc: 1 },
      { name: 'created_at', desc: 1 },
      { name: 'id', desc: 0 },
    ]);
  });
});
