import { STORE_KINDS, type StoreKind } from '../kioku.js';
import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/** store-postgres's table of each kind, inside its schema. */
const TABLES: [StoreKind, string, string][] = [
  ['facts', 'facts', ''],
  ['documents', 'documents', ''],
  ['plans', 'plans', ''],
  ['working', 'working_entries', 'WHERE expires_at > now()'],
  ['sessions', 'sessions', "WHERE metadata->>'kioku' IS NULL"],
  ['details', 'details', ''],
];

/** The users of a store-postgres schema (`kioku` unless given), over one connection of its own. */
export async function postgresDirectory(url: string, schema = 'kioku'): Promise<UserDirectory> {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  return {
    async list(query) {
      const counter = new PartitionCounter(STORE_KINDS);
      for (const [kind, table, where] of TABLES) {
        const rows = await sql<{ u: string; a: string; n: string }[]>`
          SELECT user_id u, agent_id a, count(*) n FROM ${sql(schema)}.${sql(table)} ${sql.unsafe(where)}
          GROUP BY 1, 2`;
        for (const row of rows) counter.add(row.u, row.a, kind, Number(row.n));
      }
      return pageOf(counter.values(), query);
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
