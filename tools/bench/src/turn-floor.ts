/**
 * The raw-driver floor of a chat-workload turn (`bench:turn --workload chat`): the reads and writes such a
 * turn needs, issued as hand-written SQL straight through the driver (better-sqlite3, postgres.js) on the
 * same database the stores wrote — the fact block's mark (the partition's fact count and newest fact),
 * the working-memory inventory of the session and of the patrol findings, the transcript's last entries,
 * and the append of one exchange (two entries, the cap trimmed) in one transaction. No prompt is built:
 * what is left of a turn's time above this is Kioku's.
 */
import Database from 'better-sqlite3';
import type PostgresClient from 'postgres';
import { percentile, round } from './util.js';

export interface FloorTarget {
  userId: string;
  sessionId: string;
  /** Transcript entries read per turn (the replay's window). */
  window: number;
  /** The store's transcript cap. */
  cap: number;
}

export interface Floor {
  p50: number;
  p95: number;
}

const quantiles = (times: number[]): Floor => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50), 3), p95: round(percentile(sorted, 95), 3) };
};

/** `turns` raw turns on the SQLite file (a second connection, as another process). */
export function sqliteFloor(file: string, target: FloorTarget, turns: number): Floor {
  const db = new Database(file);
  try {
    const stats = db.prepare(
      `SELECT rows FROM kioku_search_stats WHERE table_name = 'kioku_facts' AND scope = 'p' || hex(? || '/' || '')`,
    );
    const head = db.prepare(
      `SELECT * FROM kioku_facts WHERE user_id = ? AND agent_id = '' ORDER BY updated_at DESC, created_at DESC, id LIMIT 1`,
    );
    const inventory = db.prepare(
      `SELECT key, category, tags, stored_at, expires_at, version FROM kioku_working
       WHERE user_id = ? AND agent_id = '' AND expires_ms > ? AND (key = ? OR (key >= ? AND key < ?))
       ORDER BY stored_at, seq`,
    );
    const session = db.prepare(
      `SELECT seq FROM kioku_sessions WHERE user_id = ? AND agent_id = '' AND id = ?`,
    );
    const last = db.prepare(
      `SELECT * FROM kioku_session_transcript WHERE session_seq = ? ORDER BY position DESC LIMIT ?`,
    );
    const lastPosition = db.prepare(
      `SELECT max(position) AS p FROM kioku_session_transcript WHERE session_seq = ?`,
    );
    const insert = db.prepare(
      `INSERT INTO kioku_session_transcript (session_seq, position, role, content, tool_calls, tool_call_id, name, ts)
       VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?)`,
    );
    const trim = db.prepare(`DELETE FROM kioku_session_transcript WHERE session_seq = ? AND position <= ?`);
    const append = db.transaction((seq: number, exchange: [string, string][]) => {
      const p = (lastPosition.get(seq) as { p: number | null }).p ?? 0;
      const ts = new Date().toISOString();
      exchange.forEach(([role, content], i) => {
        insert.run(seq, p + i + 1, role, content, ts);
      });
      const newest = p + exchange.length;
      if (newest > target.cap) trim.run(seq, newest - target.cap);
    });
    const under = (prefix: string) => [prefix, `${prefix}/`, `${prefix}0`];
    const times: number[] = [];
    for (let t = 0; t < turns; t++) {
      const start = performance.now();
      stats.get(target.userId);
      head.get(target.userId);
      const now = Date.now();
      inventory.all(target.userId, now, ...under(`session/${target.sessionId}`));
      inventory.all(target.userId, now, ...under('patrol'));
      const seq = (session.get(target.userId, target.sessionId) as { seq: number }).seq;
      last.all(seq, target.window);
      append.immediate(seq, [
        ['user', `Floor question ${t}: what did we plan for the trip?`],
        ['assistant', `Floor answer ${t}: the museum first, then the beach.`],
      ]);
      times.push(performance.now() - start);
    }
    return quantiles(times);
  } finally {
    db.close();
  }
}

/** `turns` raw turns in the PostgreSQL schema the stores wrote. */
export async function postgresFloor(
  postgres: typeof PostgresClient,
  url: string,
  schema: string,
  target: FloorTarget,
  turns: number,
): Promise<Floor> {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  const t = (name: string) => `"${schema}".${name}`;
  try {
    const times: number[] = [];
    const user = target.userId;
    const id = target.sessionId;
    for (let k = 0; k < turns; k++) {
      const start = performance.now();
      await sql.unsafe(`SELECT n FROM ${t('fact_counts')} WHERE user_id = $1 AND agent_id = ''`, [user], {
        prepare: true,
      });
      await sql.unsafe(
        `SELECT * FROM ${t('facts')} WHERE user_id = $1 AND agent_id = '' ORDER BY updated_at DESC, created_at DESC, id LIMIT 1`,
        [user],
        { prepare: true },
      );
      for (const prefix of [`session/${id}`, 'patrol']) {
        await sql.unsafe(
          `SELECT key, category, tags, stored_at, expires_at, version FROM ${t('working_entries')}
           WHERE user_id = $1 AND agent_id = '' AND expires_at > now() AND (key = $2 OR (key >= $3 AND key < $4))
           ORDER BY stored_at, seq`,
          [user, prefix, `${prefix}/`, `${prefix}0`],
          { prepare: true },
        );
      }
      await sql.unsafe(
        `SELECT * FROM ${t('session_transcript')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2 ORDER BY seq DESC LIMIT $3`,
        [user, id, target.window],
        { prepare: true },
      );
      await sql.begin(async (tx) => {
        const [row] = await tx.unsafe(
          `SELECT coalesce(max(seq), 0)::int AS p FROM ${t('session_transcript')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2`,
          [user, id],
          { prepare: true },
        );
        const p = (row?.p as number) ?? 0;
        const ts = new Date().toISOString();
        await tx.unsafe(
          `INSERT INTO ${t('session_transcript')} (user_id, agent_id, session_id, seq, role, content, ts)
           VALUES ($1, '', $2, $3, 'user', $4, $6), ($1, '', $2, $3 + 1, 'assistant', $5, $6)`,
          [user, id, p + 1, `Floor question ${k}`, `Floor answer ${k}`, ts],
          { prepare: true },
        );
        if (p + 2 > target.cap) {
          await tx.unsafe(
            `DELETE FROM ${t('session_transcript')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2 AND seq <= $3`,
            [user, id, p + 2 - target.cap],
            { prepare: true },
          );
        }
      });
      times.push(performance.now() - start);
    }
    return quantiles(times);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
