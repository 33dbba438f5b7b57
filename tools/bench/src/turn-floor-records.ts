/**
 * The raw-driver floor (see `turn-floor.ts`) on store-sqlite's records layout (`createSqliteStores`): every
 * record a row of `kioku_records` (partition label, key, JSON; facts, details and document chunks with
 * search columns under the FTS5 index `kioku_records_fts`). A partition is found by its label, the JSON of
 * `[kind, userId, agentId, name]`; a session's transcript entries are keyed `t:<12-digit sequence>`, its k-v
 * entries `k:<key>`; a document is a head record (its id), text parts (`<id>:t:<n>`) and chunks (`<id>:c:<n>`).
 * The stores hold decoded partitions and check their version instead of reading them again; the floor reads
 * what the turn needs every turn, as an app without that cache would.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import {
  type Floor,
  type FloorTarget,
  ftsAny,
  interactionFact,
  type Lap,
  RECALLED_KEY,
  RecalledHead,
  searchTerms,
  timeTurns,
} from './turn-floor.js';

const label = (kind: string, userId: string, name = '') => JSON.stringify([kind, userId, '', name]);
/** The FTS5 `search_scope` of a partition: `p` + hex of its label. */
const scopeOf = (partition: string) => `p${Buffer.from(partition, 'utf8').toString('hex').toUpperCase()}`;
const transcriptKey = (seq: number) => `t:${String(seq).padStart(12, '0')}`;

/** `turns` raw turns on the SQLite file (a second connection, as another process). */
export async function sqliteRecordsFloor(file: string, target: FloorTarget, turns: number): Promise<Floor> {
  const db = new Database(file);
  try {
    const turn = recordsTurn(db, target);
    return await timeTurns(turns, turn);
  } finally {
    db.close();
  }
}

function recordsTurn(db: Database.Database, target: FloorTarget): (k: number, lap: Lap) => void {
  const user = target.userId;
  const facts = label('facts', user);
  const session = label('sessions', user, target.sessionId);
  const full = target.workload === 'full';
  const count = db
    .prepare(`SELECT rows FROM kioku_record_search_stats WHERE table_name = 'kioku_records' AND scope = ?`)
    .pluck();
  const newest = db.prepare(
    `SELECT json FROM kioku_records WHERE label = ? AND search_terms IS NOT NULL ORDER BY updated_at DESC, seq LIMIT ?`,
  );
  const documents = db.prepare(
    `SELECT key, json FROM kioku_records WHERE label = ? AND key NOT GLOB '*:c:*' ORDER BY seq`,
  );
  const record = db.prepare(`SELECT json FROM kioku_records WHERE label = ? AND key = ?`).pluck();
  // Facts hold most of the index: FTS5 matches the terms alone and the join keeps the partition's rows.
  const ranked = db.prepare(
    `SELECT r.key, r.json FROM kioku_records_fts JOIN kioku_records r ON r.seq = kioku_records_fts.rowid
     WHERE kioku_records_fts MATCH ? AND r.label = ? ORDER BY kioku_records_fts.rank LIMIT ?`,
  );
  const details = db.prepare(
    `SELECT r.json FROM kioku_records_fts JOIN kioku_records r ON r.seq = kioku_records_fts.rowid
     WHERE kioku_records_fts MATCH ? AND json_extract(r.json, '$.active') = 1 ORDER BY kioku_records_fts.rank LIMIT ?`,
  );
  const inventory = db.prepare(
    `SELECT key, json FROM kioku_records WHERE label = ? AND (key = ? OR (key >= ? AND key < ?))
     AND json_extract(json, '$.expiresAt') > ? ORDER BY seq`,
  );
  const tail = db.prepare(
    `SELECT json FROM kioku_records WHERE label = ? AND key > 't:' AND key < 't;' ORDER BY key DESC LIMIT ?`,
  );
  const lastKey = db
    .prepare(`SELECT max(key) FROM kioku_records WHERE label = ? AND key > 't:' AND key < 't;'`)
    .pluck();
  const insert = db.prepare(`INSERT INTO kioku_records (label, key, json) VALUES (?, ?, ?)`);
  const trim = db.prepare(`DELETE FROM kioku_records WHERE label = ? AND key > 't:' AND key <= ?`);
  const upsert = db.prepare(
    `INSERT INTO kioku_records (label, key, json) VALUES (?, ?, ?)
     ON CONFLICT (label, key) DO UPDATE SET json = excluded.json`,
  );
  const insertFact = db.prepare(
    `INSERT INTO kioku_records (label, key, json, category, tags, updated_at, search_terms, search_length)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const append = db.transaction((exchange: [string, string][]) => {
    const last = lastKey.get(session) as string | null;
    const p = last === null ? -1 : Number(last.slice(2));
    const ts = new Date().toISOString();
    exchange.forEach(([role, content], i) => {
      insert.run(session, transcriptKey(p + i + 1), JSON.stringify({ role, content, ts }));
    });
    const newest = p + exchange.length;
    if (newest + 1 > target.cap) trim.run(session, transcriptKey(newest - target.cap));
  });
  const under = (prefix: string) => [prefix, `${prefix}/`, `${prefix}0`];
  const detailScope = scopeOf(label('details', user));
  const recalled = new RecalledHead();

  return (k, lap) => {
    const message = target.message(k);
    const answer = target.answer(k);
    const now = new Date().toISOString();
    count.get(scopeOf(facts));
    newest.all(facts, full ? target.blockFacts : 1);
    if (full) {
      documents.all(label('documents', user));
      record.get(label('plans', user, target.threadId), '');
      const kv = record.get(session, `k:${RECALLED_KEY}`) as string | undefined;
      recalled.read(kv ? (JSON.parse(kv).entry.value as string) : undefined);
    }
    inventory.all(label('working', user, 'session'), ...under(`session/${target.sessionId}`), now);
    inventory.all(label('working', user, 'patrol'), ...under('patrol'), now);
    tail.all(session, target.window);
    lap('reads');
    const terms = full ? searchTerms(message) : [];
    if (terms.length > 0) {
      for (const hit of ranked.all(ftsAny(terms), facts, target.recallLimit) as Array<{ key: string }>) {
        recalled.add(hit.key);
      }
      ranked.all(ftsAny(terms), facts, target.relevantLimit);
      details.all(`search_scope : "${detailScope}" AND ${ftsAny(terms)}`, target.relevantLimit);
    }
    lap('searches');
    append.immediate([
      ['user', message],
      ['assistant', answer],
    ]);
    if (full) {
      const entry = { key: RECALLED_KEY, value: recalled.value(), ts: now, version: 1 };
      upsert.run(session, `k:${RECALLED_KEY}`, JSON.stringify({ order: 0, entry }));
      const stored = interactionFact(user, randomBytes(6).toString('hex'), message, answer);
      const { fact } = stored;
      insertFact.run(
        facts,
        fact.id,
        JSON.stringify(fact),
        fact.category,
        JSON.stringify(fact.tags),
        fact.updatedAt,
        stored.terms,
        stored.length,
      );
    }
    lap('writes');
  };
}
