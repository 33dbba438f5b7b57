/**
 * The raw-driver floor (see `turn-floor.ts`) on store-sqlite's per-kind tables (`createSqliteNativeStores`):
 * `kioku_facts` with its FTS5 index `kioku_facts_fts`, `kioku_documents`, `kioku_plans`, `kioku_working`,
 * the session's `kioku_session_kv` and `kioku_session_transcript` (by the session's `seq`), `kioku_details`
 * with `kioku_details_fts`.
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

const FACT_COLUMNS =
  'f.id, f.title, f.content, f.category, f.tags, f.metadata, f.provenance, f.event_time, f.created_at, f.updated_at, f.version';

/** `turns` raw turns on the SQLite file (a second connection, as another process). */
export async function sqliteNativeFloor(file: string, target: FloorTarget, turns: number): Promise<Floor> {
  const db = new Database(file);
  try {
    return await timeTurns(turns, nativeTurn(db, target));
  } finally {
    db.close();
  }
}

function nativeTurn(db: Database.Database, target: FloorTarget): (k: number, lap: Lap) => void {
  const user = target.userId;
  const full = target.workload === 'full';
  const count = db.prepare(
    `SELECT rows FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope = 'p' || hex(? || '/' || '')`,
  );
  const newest = db.prepare(
    `SELECT ${FACT_COLUMNS} FROM kioku_facts f WHERE user_id = ? AND agent_id = ''
     ORDER BY updated_at DESC, created_at DESC, id LIMIT ?`,
  );
  const documents = db.prepare(
    `SELECT id, title, description, tags, source, text, token_count, metadata, added_at FROM kioku_documents
     WHERE user_id = ? AND agent_id = '' ORDER BY seq`,
  );
  const plan = db.prepare(`SELECT * FROM kioku_plans WHERE user_id = ? AND agent_id = '' AND thread_id = ?`);
  const kv = db.prepare(`SELECT value FROM kioku_session_kv WHERE session_seq = ? AND key = ?`).pluck();
  const ranked = db.prepare(
    `SELECT ${FACT_COLUMNS} FROM kioku_facts_fts JOIN kioku_facts f ON f.seq = kioku_facts_fts.rowid
     WHERE kioku_facts_fts MATCH ? AND f.user_id = ? AND f.agent_id = '' ORDER BY kioku_facts_fts.rank LIMIT ?`,
  );
  const details = db.prepare(
    `SELECT d.* FROM kioku_details_fts JOIN kioku_details d ON d.seq = kioku_details_fts.rowid
     WHERE kioku_details_fts MATCH 'search_scope : "p' || hex(?) || '" AND ' || ? AND d.active = 1
     ORDER BY kioku_details_fts.rank LIMIT ?`,
  );
  const inventory = db.prepare(
    `SELECT key, category, tags, stored_at, expires_at, version FROM kioku_working
     WHERE user_id = ? AND agent_id = '' AND expires_ms > ? AND (key = ? OR (key >= ? AND key < ?))
     ORDER BY stored_at, seq`,
  );
  const session = db
    .prepare(`SELECT seq FROM kioku_sessions WHERE user_id = ? AND agent_id = '' AND id = ?`)
    .pluck();
  const tail = db.prepare(
    `SELECT * FROM kioku_session_transcript WHERE session_seq = ? ORDER BY position DESC LIMIT ?`,
  );
  const lastPosition = db
    .prepare(`SELECT max(position) FROM kioku_session_transcript WHERE session_seq = ?`)
    .pluck();
  const insert = db.prepare(
    `INSERT INTO kioku_session_transcript (session_seq, position, role, content, tool_calls, tool_call_id, name, ts)
     VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?)`,
  );
  const trim = db.prepare(`DELETE FROM kioku_session_transcript WHERE session_seq = ? AND position <= ?`);
  const upsertKv = db.prepare(
    `INSERT INTO kioku_session_kv (session_seq, position, key, value, ts, version)
     VALUES (?, (SELECT coalesce(max(position), 0) + 1 FROM kioku_session_kv WHERE session_seq = ?), ?, ?, ?, 1)
     ON CONFLICT (session_seq, key) DO UPDATE SET position = excluded.position, value = excluded.value,
       ts = excluded.ts, version = version + 1`,
  );
  const insertFact = db.prepare(
    `INSERT INTO kioku_facts (user_id, agent_id, id, title, content, category, tags, metadata, provenance,
       created_at, updated_at, version, search_terms, search_length)
     VALUES (?, '', ?, NULL, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
  );
  const append = db.transaction((seq: number, exchange: [string, string][]) => {
    const p = (lastPosition.get(seq) as number | null) ?? 0;
    const ts = new Date().toISOString();
    exchange.forEach(([role, content], i) => {
      insert.run(seq, p + i + 1, role, content, ts);
    });
    const newest = p + exchange.length;
    if (newest > target.cap) trim.run(seq, newest - target.cap);
  });
  const under = (prefix: string) => [prefix, `${prefix}/`, `${prefix}0`];
  const recalled = new RecalledHead();

  return (k, lap) => {
    const message = target.message(k);
    const answer = target.answer(k);
    count.get(user);
    newest.all(user, full ? target.blockFacts : 1);
    const seq = session.get(user, target.sessionId) as number;
    if (full) {
      documents.all(user);
      plan.get(user, target.threadId);
      const value = kv.get(seq, RECALLED_KEY) as string | undefined;
      recalled.read(value);
    }
    const now = Date.now();
    inventory.all(user, now, ...under(`session/${target.sessionId}`));
    inventory.all(user, now, ...under('patrol'));
    tail.all(seq, target.window);
    lap('reads');
    const terms = full ? searchTerms(message) : [];
    if (terms.length > 0) {
      for (const hit of ranked.all(ftsAny(terms), user, target.recallLimit) as Array<{ id: string }>) {
        recalled.add(hit.id);
      }
      ranked.all(ftsAny(terms), user, target.relevantLimit);
      details.all(user, ftsAny(terms), target.relevantLimit);
    }
    lap('searches');
    append.immediate(seq, [
      ['user', message],
      ['assistant', answer],
    ]);
    if (full) {
      upsertKv.run(seq, seq, RECALLED_KEY, recalled.value(), new Date(now).toISOString());
      const stored = interactionFact(user, randomBytes(6).toString('hex'), message, answer);
      const { fact } = stored;
      insertFact.run(
        user,
        fact.id,
        fact.content,
        fact.category,
        JSON.stringify(fact.tags),
        JSON.stringify(fact.metadata),
        JSON.stringify(fact.provenance),
        fact.createdAt,
        fact.updatedAt,
        stored.terms,
        stored.length,
      );
    }
    lap('writes');
  };
}
