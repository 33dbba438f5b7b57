import { STORE_KINDS, type StoreKind } from '../kioku.js';
import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/** One `(user, agent, count)` query per kind over store-sqlite's tables (`kioku_*`). */
const QUERIES: [StoreKind, string][] = [
  ['facts', 'SELECT user_id u, agent_id a, count(*) n FROM kioku_facts GROUP BY 1, 2'],
  ['documents', 'SELECT user_id u, agent_id a, count(*) n FROM kioku_documents GROUP BY 1, 2'],
  ['plans', 'SELECT user_id u, agent_id a, count(*) n FROM kioku_plans GROUP BY 1, 2'],
  [
    'working',
    'SELECT user_id u, agent_id a, count(*) n FROM kioku_working WHERE expires_ms > ? GROUP BY 1, 2',
  ],
  [
    'sessions',
    "SELECT user_id u, agent_id a, count(*) n FROM kioku_sessions WHERE json_extract(metadata, '$.kioku') IS NULL GROUP BY 1, 2",
  ],
  ['details', 'SELECT user_id u, agent_id a, count(*) n FROM kioku_details GROUP BY 1, 2'],
];

interface Row {
  u: string;
  a: string | null;
  n: number;
}

/** The users of a store-sqlite database file, read over a read-only connection of its own. */
export async function sqliteDirectory(file: string): Promise<UserDirectory> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return {
    async list(query) {
      const counter = new PartitionCounter(STORE_KINDS);
      for (const [kind, text] of QUERIES) {
        const statement = db.prepare<unknown[], Row>(text);
        const rows = kind === 'working' ? statement.all(Date.now()) : statement.all();
        for (const row of rows) counter.add(row.u, row.a, kind, row.n);
      }
      return pageOf(counter.values(), query);
    },
    async close() {
      db.close();
    },
  };
}
