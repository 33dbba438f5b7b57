import type { Sql } from 'postgres';
import { analyzeFact } from './analysis.js';

/** Facts analysed per statement. */
const BATCH = 1_000;

/**
 * Analyse every fact whose `search_terms` is NULL (stored before migration 0006, or by a host app's own
 * INSERT): core's analyzer runs in TypeScript, so no migration can. `setup()` calls it after migrating; each
 * batch is one UPDATE, and the triggers of migration 0008 count the new terms. Returns how many it analysed.
 */
export async function analyseFacts(client: Sql, schema: string): Promise<number> {
  const table = `"${schema}"."facts"`;
  let total = 0;
  for (;;) {
    const rows = await client.unsafe<
      Array<{
        user_id: string;
        agent_id: string;
        id: string;
        title: string | null;
        content: string;
        category: string;
        tags: string[];
      }>
    >(
      `select user_id, agent_id, id, title, content, category, tags from ${table} where search_terms is null limit ${BATCH}`,
    );
    if (rows.length === 0) return total;
    const analysed = rows.map((row) => analyzeFact({ ...row, title: row.title ?? undefined }));
    await client.unsafe(
      `update ${table} as f set search_terms = a.terms, search_length = a.length
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[]) as a(user_id, agent_id, id, terms, length)
       where (f.user_id, f.agent_id, f.id) = (a.user_id, a.agent_id, a.id) and f.search_terms is null`,
      [
        rows.map((r) => r.user_id),
        rows.map((r) => r.agent_id),
        rows.map((r) => r.id),
        analysed.map((a) => a.searchTerms),
        analysed.map((a) => a.searchLength),
      ] as never[],
    );
    total += rows.length;
  }
}
