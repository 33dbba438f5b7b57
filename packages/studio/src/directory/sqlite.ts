import { STORE_KINDS, type StoreKind } from '../kioku.js';
import { PartitionCounter, pageOf, type UserDirectory } from './directory.js';

/** The records of one kind (`kioku_records`, partitions in `kioku_record_partitions`). */
const records = (kind: StoreKind, where: string, agent = 'p.agent_id') =>
  `SELECT p.user_id u, ${agent} a, count(*) n FROM kioku_record_partitions p
   JOIN kioku_records r ON r.label = p.label WHERE p.kind = '${kind}' AND r.key <> ''${where} GROUP BY 1, 2`;

/** One `(user, agent, count)` query per kind over store-sqlite's records: one row per record. */
const RECORDS: [StoreKind, string][] = [
  ['facts', records('facts', '')],
  ['documents', records('documents', " AND instr(r.key, ':') = 0")], // document heads, not text parts or chunks
  ['plans', records('plans', '')],
  [
    'working',
    records('working', " AND (julianday(json_extract(r.json, '$.expiresAt')) - 2440587.5) * 86400000.0 > ?"),
  ],
  [
    'sessions',
    records('sessions', " AND p.name = 'index' AND json_extract(r.json, '$.metadata.kioku') IS NULL"),
  ],
  // Details are partitioned by user; each carries its agent.
  ['details', records('details', '', "coalesce(json_extract(r.json, '$.agentId'), '')")],
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
      for (const [kind, text] of RECORDS) {
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
