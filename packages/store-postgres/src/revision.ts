import type { Scope } from '@kioku/core';
import type { PostgresDatabase } from './database.js';
import { agentKey } from './sql.js';

/**
 * A partition's revision: its row in `fact_revisions` / `document_revisions`, replaced from the kind's
 * sequence by triggers on the kind's table in every writing transaction, whoever writes (migrations 0011 and
 * 0012). A partition without a row (nothing written since the migration, or erased) reads as `~` and the
 * sequence's position: every write anywhere moves it on, so even an erased partition never reads as a value
 * it had before.
 */
export async function readRevision(
  database: PostgresDatabase,
  kind: 'fact' | 'document',
  scope: Scope,
): Promise<string> {
  const { client, schema } = database;
  const text = `select r.revision::text as revision, q.last_value::text as position
    from "${schema}"."${kind}_revision_seq" as q
    left join "${schema}"."${kind}_revisions" as r on r.user_id = $1 and r.agent_id = $2`;
  const rows = await database.run(
    async () =>
      (await client.unsafe(text, [scope.userId, agentKey(scope.agentId)], { prepare: true })) as unknown as {
        revision: string | null;
        position: string;
      }[],
  );
  const row = rows[0]!;
  return row.revision ?? `~${row.position}`;
}
