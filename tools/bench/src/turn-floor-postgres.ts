/**
 * The raw-driver floor (see `turn-floor.ts`) in the PostgreSQL schema `createPostgresStores` wrote: `facts`
 * (its count in `fact_counts`, the newest through `facts_updated_idx`, the analyzed terms under the GIN index
 * `facts_terms_idx`), `documents`, `plans`, `working_entries`, `session_kv`, `session_transcript`, `details`
 * (a `tsvector` with its GIN index). Every statement is prepared; one round trip each, the append in a
 * transaction.
 */
import { randomBytes } from 'node:crypto';
import type PostgresClient from 'postgres';
import {
  type Floor,
  type FloorTarget,
  interactionFact,
  type Lap,
  RECALLED_KEY,
  RecalledHead,
  searchTerms,
  timeTurns,
} from './turn-floor.js';

const FACT_COLUMNS =
  'id, title, content, category, tags, metadata, provenance, event_time, created_at, updated_at, version';

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
  const run = (text: string, values: unknown[]) => sql.unsafe(text, values as never[], { prepare: true });
  const user = target.userId;
  const id = target.sessionId;
  const full = target.workload === 'full';
  const recalled = new RecalledHead();
  // Rows holding any of the terms (the GIN index on the analyzed terms), ranked by PostgreSQL's `ts_rank`
  // of those terms (an OR query) over the row's terms, newest first among equals.
  const ranked = `SELECT ${FACT_COLUMNS} FROM ${t('facts')}
    WHERE user_id = $1 AND agent_id = '' AND string_to_array(search_terms, ' ') && $2::text[]
    ORDER BY ts_rank(array_to_tsvector(string_to_array(search_terms, ' ')),
      to_tsquery('simple', array_to_string(ARRAY(SELECT quote_literal(t) FROM unnest($2::text[]) t), ' | '))) DESC,
      seq DESC
    LIMIT $3`;
  const turn = async (k: number, lap: Lap) => {
    const message = target.message(k);
    const answer = target.answer(k);
    await run(`SELECT n FROM ${t('fact_counts')} WHERE user_id = $1 AND agent_id = ''`, [user]);
    await run(
      `SELECT ${FACT_COLUMNS} FROM ${t('facts')} WHERE user_id = $1 AND agent_id = ''
       ORDER BY updated_at DESC, created_at DESC, id COLLATE "C" LIMIT $2`,
      [user, full ? target.blockFacts : 1],
    );
    if (full) {
      await run(
        `SELECT id, title, description, tags, source, text, token_count, metadata, added_at FROM ${t('documents')}
         WHERE user_id = $1 AND agent_id = '' ORDER BY seq`,
        [user],
      );
      await run(`SELECT * FROM ${t('plans')} WHERE user_id = $1 AND agent_id = '' AND thread_id = $2`, [
        user,
        target.threadId,
      ]);
      const [kv] = await run(
        `SELECT value FROM ${t('session_kv')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2 AND key = $3`,
        [user, id, RECALLED_KEY],
      );
      recalled.read(kv?.value as string | undefined);
    }
    for (const prefix of [`session/${id}`, 'patrol']) {
      await run(
        `SELECT key, category, tags, stored_at, expires_at, version FROM ${t('working_entries')}
         WHERE user_id = $1 AND agent_id = '' AND expires_at > now() AND (key = $2 OR (key >= $3 AND key < $4))
         ORDER BY stored_at, seq`,
        [user, prefix, `${prefix}/`, `${prefix}0`],
      );
    }
    await run(
      `SELECT * FROM ${t('session_transcript')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2 ORDER BY seq DESC LIMIT $3`,
      [user, id, target.window],
    );
    lap('reads');
    const terms = full ? searchTerms(message) : [];
    if (terms.length > 0) {
      for (const hit of await run(ranked, [user, terms, target.recallLimit])) recalled.add(hit.id as string);
      await run(ranked, [user, terms, target.relevantLimit]);
      // Details have a tsvector: PostgreSQL's own full-text search, any of the message's words, ts_rank order.
      await run(
        `WITH q AS (SELECT to_tsquery('english', array_to_string(tsvector_to_array(to_tsvector('english', $2)), ' | ')) AS q)
         SELECT d.* FROM ${t('details')} d, q WHERE d.user_id = $1 AND d.is_active AND d.search @@ q.q
         ORDER BY ts_rank(d.search, q.q) DESC LIMIT $3`,
        [user, message, target.relevantLimit],
      );
    }
    lap('searches');
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
        [user, id, p + 1, message, answer, ts],
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
    if (full) await writeFull(message, answer);
    lap('writes');
  };
  /** The recalled ids written back and the exchange stored as a fact (the full workload's record). */
  const writeFull = async (message: string, answer: string) => {
    await run(
      `INSERT INTO ${t('session_kv')} (user_id, agent_id, session_id, key, value, ts, ord, version)
       VALUES ($1, '', $2, $3, $4, now(),
         (SELECT coalesce(max(ord), 0) + 1 FROM ${t('session_kv')} WHERE user_id = $1 AND agent_id = '' AND session_id = $2), 1)
       ON CONFLICT (user_id, agent_id, session_id, key) DO UPDATE
         SET value = excluded.value, ts = excluded.ts, ord = excluded.ord, version = ${t('session_kv')}.version + 1`,
      [user, id, RECALLED_KEY, recalled.value()],
    );
    const stored = interactionFact(user, randomBytes(6).toString('hex'), message, answer);
    const { fact } = stored;
    await run(
      `INSERT INTO ${t('facts')} (user_id, agent_id, id, title, content, category, tags, tag_keys, metadata,
         provenance, created_at, updated_at, version, search_terms, search_length)
       VALUES ($1, '', $2, NULL, $3, $4, $5::json, $6::text[], $7::json, $8::json, $9, $9, 1, $10, $11)`,
      [
        user,
        fact.id,
        fact.content,
        fact.category,
        JSON.stringify(fact.tags),
        fact.tags.map((tag) => tag.toLowerCase()),
        JSON.stringify(fact.metadata),
        JSON.stringify(fact.provenance),
        fact.createdAt,
        stored.terms,
        stored.length,
      ],
    );
  };
  try {
    return await timeTurns(turns, turn);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
