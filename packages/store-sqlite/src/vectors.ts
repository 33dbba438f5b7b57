import {
  type Clock,
  CorruptDataError,
  KiokuError,
  type Scope,
  StorageError,
  ValidationError,
} from '@kioku/core';
import {
  makeVectorSnapshot,
  parseOrThrow,
  parseScope,
  parseVectorIds,
  parseVectorPoints,
  parseVectorQuery,
  parseVectorSelection,
  parseVectorSnapshot,
  sortModelCounts,
  systemClock,
} from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotSelector,
  SnapshotSelectorSchema,
  type VectorHit,
  type VectorIndex,
  type VectorModelCount,
  type VectorPoint,
  type VectorPointInput,
  type VectorQuery,
  type VectorRecord,
  VectorRecordSchema,
  type VectorSelection,
  type VectorSnapshot,
} from '@kioku/core/store';
import type Database from 'better-sqlite3';
import { SqliteConnection, type SqliteConnectionOptions } from './connection.js';
import { loadSqliteVec } from './sqlite-vec.js';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,50}$/;

/**
 * Vectors per chunk of sqlite-vec's storage. Every partition (user + agent) gets chunks of its own, each
 * allocated whole: 64 keeps a small user's file cost at 64 vectors (128 KB at 512 dimensions) while a
 * search reads a large partition in blocks big enough not to matter (`pnpm bench:store --adapter sqlite-vec`).
 */
const CHUNK_SIZE = 64;

export interface SqliteVectorIndexOptions extends SqliteConnectionOptions {
  /** Size of the vectors (the embedder's `dimensions`), at most 8,192 (sqlite-vec's limit). */
  dimensions: number;
  /** The table holding every kind's points (default `kioku_vectors`; its point table is `<table>_points`). */
  table?: string;
  /** Instead of `file` / `database`: a connection shared with the stores (what `createSqliteStores` passes). */
  connection?: SqliteConnection;
  /** Time source for snapshot timestamps (default the system clock). */
  clock?: Clock;
}

type Filter = Readonly<Record<string, string | number | boolean>>;

interface PointRow {
  rid: number;
  user_id: string;
  agent_id: string;
  id: string;
  kind: string;
  model: string | null;
  payload: string;
  zero: number;
}

interface Candidate {
  rid: number;
  score: number;
}

/**
 * Kioku's VectorIndex in the SQLite database itself, with [sqlite-vec](https://github.com/asg017/sqlite-vec)
 * (a `vec0` virtual table, loaded into better-sqlite3 from the prebuilt binary of the `sqlite-vec`
 * package): vectors survive a restart, nothing is embedded or rebuilt when a process starts.
 *
 * Two tables: `<table>_points` (one row per point: scope, id, kind, model, payload; its rowid is the
 * vector's) and `<table>` (`vec0`: the vectors as float32, cosine distance, partitioned by user + agent
 * — a search is an exact k-nearest-neighbour scan of the caller's partition only, so a scope filter never
 * leaves it short of `limit` hits — with the kind as a metadata column the scan filters on). A payload
 * filter limits the scan to the partition's points that match it. A zero vector has no direction: it is
 * kept in the point table only and scores 0, as in core's in-memory index.
 *
 * `setup()` loads the extension, creates both tables (idempotent) and checks that an existing table holds
 * vectors of `dimensions` (another size is a ValidationError: use another `table`, or reembed into a new
 * one). Erasure deletes the rows (sqlite-vec zeroes a deleted vector's bytes and drops a chunk once
 * empty), with `secure_delete` on, then truncates the write-ahead log.
 */
export class SqliteVectorIndex implements VectorIndex {
  readonly dimensions: number;
  readonly table: string;
  readonly #points: string;
  readonly #connection: SqliteConnection;
  readonly #clock: Clock;
  readonly #statements = new Map<string, Database.Statement>();
  #ready: Database.Database | undefined;

  constructor(options: SqliteVectorIndexOptions) {
    const { dimensions, table = 'kioku_vectors', connection, clock, ...open } = options;
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) {
      throw new ValidationError('SqliteVectorIndex dimensions must be an integer from 1 to 8192.');
    }
    if (!TABLE_NAME.test(table)) {
      throw new ValidationError(
        `Invalid table name "${table}": use letters, digits and _ (at most 51), not starting with a digit.`,
      );
    }
    if (connection && (open.file !== undefined || open.database !== undefined)) {
      throw new ValidationError('Give `connection`, or `file` / `database`, not both.');
    }
    this.dimensions = dimensions;
    this.table = table;
    this.#points = `${table}_points`;
    this.#connection = connection ?? new SqliteConnection(open, notSetUp);
    this.#clock = clock ?? systemClock;
  }

  /**
   * Load sqlite-vec, create the tables when missing (idempotent; one immediate transaction, so several
   * processes may run it), and check that an existing table holds `dimensions`-sized vectors.
   */
  async setup(): Promise<void> {
    const db = this.#connection.open(true);
    loadSqliteVec(db);
    this.#run(() =>
      db
        .transaction(() => {
          db.exec(`
            CREATE TABLE IF NOT EXISTS "${this.#points}" (
              rid INTEGER PRIMARY KEY,
              user_id TEXT NOT NULL,
              agent_id TEXT NOT NULL,
              id TEXT NOT NULL,
              kind TEXT NOT NULL,
              model TEXT,
              payload TEXT NOT NULL,
              zero INTEGER NOT NULL
            );
            CREATE UNIQUE INDEX IF NOT EXISTS "${this.#points}_id" ON "${this.#points}" (user_id, agent_id, id);
            CREATE INDEX IF NOT EXISTS "${this.#points}_kind" ON "${this.#points}" (user_id, agent_id, kind, model);
            CREATE VIRTUAL TABLE IF NOT EXISTS "${this.table}" USING vec0(
              partition TEXT PARTITION KEY,
              kind TEXT,
              embedding FLOAT[${this.dimensions}] distance_metric=cosine,
              chunk_size=${CHUNK_SIZE}
            );`);
          this.#checkDimensions(db);
        })
        .immediate(),
    );
    this.#ready = db;
  }

  async upsert(scope: Scope, points: VectorPointInput[]): Promise<void> {
    const s = parseScope(scope);
    const unique = parseVectorPoints(points, this.dimensions);
    if (unique.length === 0) return;
    const db = this.#db;
    this.#run(() => db.transaction(() => this.#write(s, unique)).immediate());
  }

  async search(scope: Scope, query: VectorQuery): Promise<VectorHit[]> {
    const s = parseScope(scope);
    const q = parseVectorQuery(query, this.dimensions);
    const db = this.#db;
    return this.#run(() =>
      db.transaction(() => {
        const zeroQuery = q.vector.every((x) => x === 0);
        // A zero query has no direction: every point scores 0 (as in core's in-memory index).
        let found = zeroQuery ? [] : this.#nearest(s, q.vector, q.limit, q.kind, q.filter);
        const last = found.at(-1)?.score ?? 0;
        if (found.length < q.limit || last < 0) {
          // Zero vectors score 0: they rank above every negative score and fill a short list.
          const zeros = this.#zeroPoints(s, q.limit, zeroQuery, q.kind, q.filter);
          found = [...found, ...zeros.map((rid) => ({ rid, score: 0 }))]
            .sort((a, b) => b.score - a.score)
            .slice(0, q.limit);
        }
        const kept = q.minScore === undefined ? found : found.filter((c) => c.score >= q.minScore!);
        const rows = this.#rowsByRid(kept.map((c) => c.rid));
        const hits: VectorHit[] = [];
        for (const { rid, score } of kept) {
          const row = rows.get(rid);
          if (!row) continue;
          hits.push({
            id: row.id,
            kind: row.kind,
            score,
            payload: JSON.parse(row.payload) as VectorHit['payload'],
            ...(row.model === null ? {} : { model: row.model }),
          });
        }
        // Equal scores in a stable order (by id), as pgvector's index orders them.
        return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      })(),
    );
  }

  async delete(scope: Scope, ids: string[]): Promise<number> {
    const s = parseScope(scope);
    const unique = parseVectorIds(ids);
    if (unique.length === 0) return 0;
    const db = this.#db;
    return this.#run(() =>
      db
        .transaction(() => {
          const rows = this.#prepare(
            `SELECT rid, zero FROM "${this.#points}" WHERE user_id = ? AND agent_id = ? AND id IN (SELECT value FROM json_each(?))`,
          ).all(s.userId, agentKey(s), JSON.stringify(unique)) as PointRow[];
          this.#remove(rows);
          return rows.length;
        })
        .immediate(),
    );
  }

  async count(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    const [where, params] = this.#scopeWhere(s, kind);
    return this.#run(
      () =>
        this.#prepare(`SELECT count(*) FROM "${this.#points}" WHERE ${where}`)
          .pluck()
          .get(...params) as number,
    );
  }

  async models(scope: Scope, selection: Pick<VectorSelection, 'kind'> = {}): Promise<VectorModelCount[]> {
    const s = parseScope(scope);
    const { kind } = parseVectorSelection(selection);
    const [where, params] = this.#scopeWhere(s, kind);
    const rows = this.#run(
      () =>
        this.#prepare(
          `SELECT model, count(*) AS count FROM "${this.#points}" WHERE ${where} GROUP BY model`,
        ).all(...params) as VectorModelCount[],
    );
    return sortModelCounts(rows.map((r) => ({ model: r.model, count: r.count })));
  }

  async clear(scope: Scope, selection: VectorSelection = {}): Promise<number> {
    const s = parseScope(scope);
    const { kind, exceptModel } = parseVectorSelection(selection);
    const [where, params] = this.#scopeWhere(s, kind);
    const except = exceptModel === undefined ? '' : ' AND model IS NOT ?';
    const db = this.#db;
    return this.#run(() =>
      db
        .transaction(() => {
          const rows = this.#prepare(`SELECT rid, zero FROM "${this.#points}" WHERE ${where}${except}`).all(
            ...params,
            ...(exceptModel === undefined ? [] : [exceptModel]),
          ) as PointRow[];
          this.#remove(rows);
          return rows.length;
        })
        .immediate(),
    );
  }

  /**
   * Every point of the user, every agent and kind, in one transaction; then none of them is left in the
   * file's bytes: sqlite-vec zeroes each deleted vector in its chunk (and drops an emptied chunk), the rows
   * are deleted with `secure_delete` on, and the write-ahead log is checkpointed and truncated.
   */
  async eraseUser(userId: string): Promise<string[]> {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    const db = this.#db;
    return this.#run(() =>
      this.#connection.eraseAndScrub(() =>
        db
          .transaction(() => {
            const rows = this.#prepare(`SELECT rid, id, zero FROM "${this.#points}" WHERE user_id = ?`).all(
              userId,
            ) as PointRow[];
            this.#remove(rows);
            return rows.map((row) => row.id);
          })
          .immediate(),
      ),
    );
  }

  async snapshot(selector: SnapshotSelector): Promise<VectorSnapshot> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const db = this.#db;
    const records = this.#run(() =>
      db.transaction(() => {
        const owner = 'userId' in parsed ? ' WHERE user_id = ?' : '';
        const rows = this.#prepare(`SELECT * FROM "${this.#points}"${owner} ORDER BY rid`).all(
          ...('userId' in parsed ? [parsed.userId] : []),
        ) as PointRow[];
        const vector = this.#prepare(`SELECT embedding FROM "${this.table}" WHERE rowid = ?`).pluck();
        return rows.map((row) =>
          this.#record(row, row.zero ? undefined : (vector.get(row.rid) as Buffer | undefined)),
        );
      })(),
    );
    return makeVectorSnapshot(parsed, this.dimensions, records, this.#clock);
  }

  /**
   * Validates the whole snapshot first (dimensions included), then replaces every partition it contains
   * in one transaction: all of them are restored, or none.
   */
  async restore(snapshot: unknown, options: RestoreOptions = {}): Promise<RestoreReport> {
    const partitions = parseVectorSnapshot(snapshot, this.dimensions, options);
    const db = this.#db;
    let records = 0;
    this.#run(() =>
      db
        .transaction(() => {
          for (const partition of partitions) {
            const scope: Scope =
              partition.agentId === undefined
                ? { userId: partition.userId }
                : { userId: partition.userId, agentId: partition.agentId };
            const rows = this.#prepare(
              `SELECT rid, zero FROM "${this.#points}" WHERE user_id = ? AND agent_id = ?`,
            ).all(scope.userId, agentKey(scope)) as PointRow[];
            this.#remove(rows);
            this.#write(scope, partition.records);
            records += partition.records.length;
          }
        })
        .immediate(),
    );
    return { records, partitions: partitions.length };
  }

  /** Closes the connection if this index opened it (one shared with the stores is closed by them). */
  async close(): Promise<void> {
    this.#connection.close();
  }

  /** The connection with sqlite-vec loaded and the tables checked (once per connection). */
  get #db(): Database.Database {
    const db = this.#connection.db;
    if (this.#ready === db) return db;
    this.#run(() => {
      loadSqliteVec(db);
      this.#checkDimensions(db);
    });
    this.#ready = db;
    return db;
  }

  /** The vec0 table's declared size must be `dimensions`; a missing table means setup() was not run. */
  #checkDimensions(db: Database.Database): void {
    const sql = db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(this.table) as
      | string
      | undefined;
    const points = db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(this.#points);
    if (sql === undefined || points === undefined) throw notSetUp();
    const declared = /embedding FLOAT\[(\d+)\]/i.exec(sql)?.[1];
    if (declared !== String(this.dimensions)) {
      throw new ValidationError(
        `Table ${this.table} holds ${declared ?? 'no'}-dimensional vectors; this index is configured for ${this.dimensions}. Use another table (option \`table\`), or reembed into a new one.`,
        { details: { table: this.table, expected: this.dimensions, actual: Number(declared) || null } },
      );
    }
  }

  /** Insert or replace points of one scope (inside a write transaction). */
  #write(
    scope: Scope,
    points: readonly Pick<VectorPoint, 'id' | 'kind' | 'vector' | 'payload' | 'model'>[],
  ): void {
    const find = this.#prepare(
      `SELECT rid, zero FROM "${this.#points}" WHERE user_id = ? AND agent_id = ? AND id = ?`,
    );
    const insert = this.#prepare(
      `INSERT INTO "${this.#points}" (user_id, agent_id, id, kind, model, payload, zero) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const update = this.#prepare(
      `UPDATE "${this.#points}" SET kind = ?, model = ?, payload = ?, zero = ? WHERE rid = ?`,
    );
    const insertVector = this.#prepare(
      `INSERT INTO "${this.table}" (rowid, partition, kind, embedding) VALUES (?, ?, ?, ?)`,
    );
    const updateVector = this.#prepare(`UPDATE "${this.table}" SET kind = ?, embedding = ? WHERE rowid = ?`);
    const deleteVector = this.#prepare(`DELETE FROM "${this.table}" WHERE rowid = ?`);
    const agent = agentKey(scope);
    const partition = partitionKey(scope);
    for (const point of points) {
      const zero = point.vector.every((x) => x === 0);
      const payload = JSON.stringify(point.payload);
      const found = find.get(scope.userId, agent, point.id) as PointRow | undefined;
      if (!found) {
        const { lastInsertRowid } = insert.run(
          scope.userId,
          agent,
          point.id,
          point.kind,
          point.model ?? null,
          payload,
          zero ? 1 : 0,
        );
        if (!zero) insertVector.run(BigInt(lastInsertRowid), partition, point.kind, float32(point.vector));
        continue;
      }
      const rid = BigInt(found.rid);
      update.run(point.kind, point.model ?? null, payload, zero ? 1 : 0, found.rid);
      if (found.zero && !zero) insertVector.run(rid, partition, point.kind, float32(point.vector));
      else if (!found.zero && zero) deleteVector.run(rid);
      else if (!zero) updateVector.run(point.kind, float32(point.vector), rid);
    }
  }

  /** Delete points (and their vectors) by row (inside a write transaction). */
  #remove(rows: readonly Pick<PointRow, 'rid' | 'zero'>[]): void {
    const deleteVector = this.#prepare(`DELETE FROM "${this.table}" WHERE rowid = ?`);
    const deletePoint = this.#prepare(`DELETE FROM "${this.#points}" WHERE rid = ?`);
    for (const { rid, zero } of rows) {
      if (!zero) deleteVector.run(BigInt(rid));
      deletePoint.run(rid);
    }
  }

  /**
   * The `limit` nearest vectors of the scope's partition, exactly (sqlite-vec scans the partition's
   * chunks), of one kind and, with a filter, among the points whose payload matches it.
   */
  #nearest(
    scope: Scope,
    vector: readonly number[],
    limit: number,
    kind?: string,
    filter?: Filter,
  ): Candidate[] {
    let sql = `SELECT rowid AS rid, distance FROM "${this.table}" WHERE embedding MATCH ? AND k = ? AND partition = ?`;
    const params: unknown[] = [float32(vector), limit, partitionKey(scope)];
    if (kind !== undefined) {
      sql += ' AND kind = ?';
      params.push(kind);
    }
    if (filter && Object.keys(filter).length > 0) {
      const [where, values] = this.#scopeWhere(scope, kind, filter);
      sql += ` AND rowid IN (SELECT rid FROM "${this.#points}" WHERE ${where})`;
      params.push(...values);
    }
    const rows = this.#prepare(sql).all(...params) as Array<{ rid: number; distance: number | null }>;
    return rows.map((row) => ({ rid: row.rid, score: row.distance === null ? 0 : 1 - row.distance }));
  }

  /** Points of the scope with zero vectors (or every point, for a zero query), in insertion order. */
  #zeroPoints(scope: Scope, limit: number, all: boolean, kind?: string, filter?: Filter): number[] {
    const [where, params] = this.#scopeWhere(scope, kind, filter);
    return this.#prepare(
      `SELECT rid FROM "${this.#points}" WHERE ${where}${all ? '' : ' AND zero = 1'} ORDER BY rid LIMIT ?`,
    )
      .pluck()
      .all(...params, limit) as number[];
  }

  #rowsByRid(rids: readonly number[]): Map<number, PointRow> {
    if (rids.length === 0) return new Map();
    const rows = this.#prepare(
      `SELECT * FROM "${this.#points}" WHERE rid IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(rids)) as PointRow[];
    return new Map(rows.map((row) => [row.rid, row]));
  }

  /**
   * The scope's points (this user, this agent or none), of one kind, with every payload key/value given:
   * the value's JSON type must match too, so `1`, `"1"` and `true` differ (as in core).
   */
  #scopeWhere(scope: Scope, kind?: string, filter?: Filter): [string, unknown[]] {
    let where = 'user_id = ? AND agent_id = ?';
    const params: unknown[] = [scope.userId, agentKey(scope)];
    if (kind !== undefined) {
      where += ' AND kind = ?';
      params.push(kind);
    }
    for (const [key, value] of Object.entries(filter ?? {})) {
      const path = `$.${key}`; // a plain identifier (PayloadFilterKeySchema)
      if (typeof value === 'boolean') {
        where += ' AND json_type(payload, ?) = ?';
        params.push(path, value ? 'true' : 'false');
      } else {
        where += ' AND json_type(payload, ?) = ? AND json_extract(payload, ?) = ?';
        params.push(path, typeof value === 'string' ? 'text' : 'integer', path, value);
      }
    }
    return [where, params];
  }

  /** A stored row as a Kioku record; a row that is not one is CORRUPT_DATA, never guessed at. */
  #record(row: PointRow, embedding: Buffer | undefined): VectorRecord {
    let payload: unknown;
    try {
      payload = JSON.parse(row.payload);
    } catch {
      payload = undefined;
    }
    const vector = row.zero
      ? Array<number>(this.dimensions).fill(0)
      : embedding
        ? Array.from(new Float32Array(embedding.buffer, embedding.byteOffset, embedding.byteLength / 4))
        : undefined;
    const parsed = VectorRecordSchema.safeParse({
      id: row.id,
      kind: row.kind,
      userId: row.user_id,
      ...(row.agent_id === '' ? {} : { agentId: row.agent_id }),
      ...(row.model === null ? {} : { model: row.model }),
      payload,
      vector,
    });
    if (!parsed.success) {
      throw new CorruptDataError(
        `Row (${row.user_id}, ${row.agent_id}, ${row.id}) of ${this.#points} is not a Kioku vector point.`,
        { details: { table: this.#points, issues: parsed.error.issues.slice(0, 5) } },
      );
    }
    return parsed.data;
  }

  #prepare(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }

  #run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof KiokuError) throw error;
      throw new StorageError(`SQLite vector index (${this.table}) failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}

/** `''` stands for "no agent". */
const agentKey = (scope: Scope): string => scope.agentId ?? '';

/** sqlite-vec's partition of a scope: ids hold no `/` (IdSchema), so `user/agent` names one scope only. */
const partitionKey = (scope: Scope): string => `${scope.userId}/${scope.agentId ?? ''}`;

/** A vector as sqlite-vec's float32 blob. */
const float32 = (vector: readonly number[]): Buffer => {
  const array = Float32Array.from(vector);
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
};

function notSetUp(): StorageError {
  return new StorageError(
    'The Kioku SQLite vector tables are not set up in this database: call `await stores.setup()` (or the index’s `setup()`) first.',
  );
}
