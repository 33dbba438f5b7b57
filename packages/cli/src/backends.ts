import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Clock, type KiokuStores, NotFoundError, StorageError } from '@kioku/core';
import { nearest } from '@kioku/core/adapter';
import { importAdapter, LOADERS } from './adapters.js';
import { UsageError } from './errors.js';
import { mayOpenScheme, resolveStoreAdapter } from './store-adapters.js';
import { parseUrl, redact } from './urls.js';

/**
 * Where memory lives, parsed from what the user typed:
 * `json:./data` (or `file:`), `sqlite:./kioku.db`, `postgres://…[?schema=kioku]`, `redis://…[?prefix=kioku:]`.
 */
export type BackendSpec =
  | { type: 'json'; directory: string; label: string; identity: string }
  | { type: 'sqlite'; file: string; label: string; identity: string }
  | {
      type: 'postgres';
      url: string;
      schema: string | undefined;
      /** Connections this process opens at most (`?pool=`; without it, @kioku/store-postgres's default, 2). */
      pool: number | undefined;
      /** `?prepare=false`: no named prepared statements, for PgBouncer in transaction mode before 1.21. */
      prepare: boolean;
      label: string;
      identity: string;
    }
  | { type: 'redis'; url: string; prefix: string | undefined; label: string; identity: string }
  | {
      /** A scheme served by a registered adapter (`registerStoreAdapter`, `KIOKU_ADAPTERS`). */
      type: 'adapter';
      scheme: string;
      location: string;
      input: string;
      label: string;
      identity: string;
    };

export type BackendType = BackendSpec['type'];

/** The stores bundle of one backend, opened, with the spec it came from. */
export interface Backend {
  readonly spec: BackendSpec;
  /**
   * The adapter's bundle: `setup()` creates or upgrades the schema where the adapter has one (SQLite,
   * PostgreSQL) and checks the server for Redis; `close()` releases it.
   */
  readonly stores: KiokuStores;
  setup(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `source`: the data must already be there (a typo must not read as "no memory"); `target`: created. */
  role: 'source' | 'target';
  /** Time source of the stores (timestamps they write, working-memory expiry); the system clock by default. */
  clock?: Clock;
}

const EXAMPLES = 'json:./data, sqlite:./kioku.db, postgres://user@host:5432/db or redis://host:6379';

/** A local path after `json:` / `sqlite:`: relative to the working directory, or a `file:` URL's path. */
function localPath(scheme: string, rest: string, input: string): string {
  if (rest.startsWith('//')) {
    try {
      return fileURLToPath(`file:${rest}`);
    } catch (error) {
      throw new UsageError(`"${input}": ${(error as Error).message}`);
    }
  }
  if (rest === '') throw new UsageError(`"${input}" names no path; write ${scheme}:./path.`);
  return path.resolve(rest);
}

/** Parse a backend argument (`--from`, `--to`, `--store`). Throws a UsageError naming the accepted forms. */
const BUILT_IN_SCHEMES = ['json', 'file', 'sqlite', 'postgres', 'postgresql', 'redis', 'rediss'];

export function parseBackend(input: string): BackendSpec {
  const match = /^([A-Za-z][A-Za-z0-9+.-]+):(.*)$/s.exec(input.trim());
  if (!match) throw new UsageError(`"${input}" is not a backend. Use one of: ${EXAMPLES}.`);
  const scheme = match[1]!.toLowerCase();
  const rest = match[2]!;
  switch (scheme) {
    case 'json':
    case 'file': {
      const directory = localPath(scheme, rest, input);
      return { type: 'json', directory, label: `json:${directory}`, identity: `json:${directory}` };
    }
    case 'sqlite': {
      if (rest === ':memory:') {
        throw new UsageError(
          'sqlite::memory: is gone when the command exits; give a file, e.g. sqlite:./kioku.db.',
        );
      }
      const file = localPath(scheme, rest, input);
      return { type: 'sqlite', file, label: `sqlite:${file}`, identity: `sqlite:${file}` };
    }
    case 'postgres':
    case 'postgresql': {
      const url = parseUrl(input);
      // `schema`, `pool` and `prepare` are Kioku's options, not connection parameters: postgres.js would
      // send them to the server.
      const schema = url.searchParams.get('schema') ?? undefined;
      const pool = poolSize(url.searchParams.get('pool'), input);
      const prepare = url.searchParams.get('prepare') !== 'false';
      for (const option of ['schema', 'pool', 'prepare']) url.searchParams.delete(option);
      const database = decodeURIComponent(url.pathname.slice(1)) || url.username || 'postgres';
      return {
        type: 'postgres',
        url: url.toString(),
        schema,
        pool,
        prepare,
        label: redact(parseUrl(input)),
        identity: `postgres://${url.hostname}:${url.port || '5432'}/${database}#${schema ?? 'kioku'}`,
      };
    }
    case 'redis':
    case 'rediss': {
      const url = parseUrl(input);
      const prefix = url.searchParams.get('prefix') ?? undefined;
      url.searchParams.delete('prefix');
      const db = url.pathname.slice(1) || '0';
      return {
        type: 'redis',
        url: url.toString(),
        prefix,
        label: redact(parseUrl(input)),
        identity: `redis://${url.hostname}:${url.port || '6379'}/${db}#${prefix ?? 'kioku:'}`,
      };
    }
    default: {
      if (mayOpenScheme(scheme)) {
        const spec = `${scheme}:${rest}`;
        return { type: 'adapter', scheme, location: rest, input, label: spec, identity: spec };
      }
      const near = nearest(scheme, BUILT_IN_SCHEMES);
      throw new UsageError(
        `Unknown backend "${scheme}:" in "${input}".${near ? ` Did you mean "${near}:"?` : ''} Use one of: ${EXAMPLES}, or a scheme of an adapter module named in KIOKU_ADAPTERS.`,
      );
    }
  }
}

/**
 * What a store that does not exist means for a command that reads, erases or serves: nothing to do, say so,
 * and how to start a new store there on purpose.
 */
const NOTHING_CREATED =
  'nothing was read, erased or created. To start a new store there, run "kioku init --store <backend>" (or pass --create to "kioku studio" / "kioku mcp"); "kioku migrate --to" and "kioku import --to" write one from a copy.';

/** The one rule for a `source` store: it must exist, or NotFoundError names it and nothing is created. */
async function mustExist(what: string, file: string, kind: 'directory' | 'file'): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  const ok = info && (kind === 'directory' ? info.isDirectory() : info.isFile());
  if (!ok) {
    throw new NotFoundError(`No ${what} at ${file}: check the path; ${NOTHING_CREATED}`, {
      details: { path: file },
    });
  }
}

/** A PostgreSQL `source` must hold Kioku's tables (its migration history) in the schema; none is created. */
async function mustHaveSchema(
  retryable: (error: unknown) => boolean,
  stores: {
    database: { client: { unsafe(query: string, args: string[]): Promise<unknown[]> }; schema: string };
  },
  label: string,
): Promise<void> {
  const { client, schema } = stores.database;
  const rows = await client
    .unsafe('select to_regclass($1) as t', [`"${schema}".__kioku_migrations`])
    .catch((error: unknown) => {
      throw new StorageError(`Cannot read schema "${schema}" of ${label}: ${(error as Error).message}`, {
        cause: error,
        retryable: retryable(error),
        details: { schema, url: label },
      });
    });
  if ((rows[0] as { t: string | null } | undefined)?.t == null) {
    throw new NotFoundError(
      `No Kioku tables in PostgreSQL schema "${schema}" of ${label}: check the URL and its ?schema=; ${NOTHING_CREATED}`,
      { details: { schema, url: label } },
    );
  }
}

function poolSize(value: string | null, input: string): number | undefined {
  if (value === null) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new UsageError(`"${input}": pool= takes a number of connections from 1 to 1000 (got "${value}").`);
  }
  return n;
}

/** Open the stores of a backend. Nothing is written until a restore (or `setup()`) runs. */
export async function openBackend(spec: BackendSpec, options: OpenOptions): Promise<Backend> {
  const stores = await openAdapterStores(spec, options);
  return {
    spec,
    stores,
    setup: async () => {
      // A JSON store writes its directory lazily: made here, so a store just set up (`kioku init`,
      // `--create`) exists for the next command even before anything is written to it.
      if (spec.type === 'json') await mkdir(spec.directory, { recursive: true });
      await stores.setup();
    },
    close: () => stores.close(),
  };
}

async function openAdapterStores(spec: BackendSpec, options: OpenOptions): Promise<KiokuStores> {
  const { clock, role } = options;
  switch (spec.type) {
    case 'json': {
      if (role === 'source') await mustExist('JSON data directory', spec.directory, 'directory');
      const { createJsonStores } = await importAdapter('json', LOADERS.json);
      return createJsonStores({ directory: spec.directory, clock });
    }
    case 'sqlite': {
      // better-sqlite3 creates a missing file: a mistyped source would otherwise read as an empty memory.
      if (role === 'source') await mustExist('SQLite database', spec.file, 'file');
      // A store made on purpose (init, --create, a migrate or import target) gets its directory too.
      else await mkdir(path.dirname(spec.file), { recursive: true });
      const { createSqliteStores } = await importAdapter('sqlite', LOADERS.sqlite);
      return createSqliteStores({ file: spec.file, clock });
    }
    case 'postgres': {
      const { createPostgresStores, isRetryablePostgresError } = await importAdapter(
        'postgres',
        LOADERS.postgres,
      );
      const stores = createPostgresStores({
        url: spec.url,
        schema: spec.schema,
        clock,
        clientOptions: {
          ...(spec.pool !== undefined ? { max: spec.pool } : {}),
          prepare: spec.prepare,
          onnotice: () => {},
        },
      });
      if (role === 'source') {
        try {
          await mustHaveSchema(isRetryablePostgresError, stores, spec.label);
        } catch (error) {
          await stores.close().catch(() => {});
          throw error;
        }
      }
      return stores;
    }
    case 'redis': {
      const { createRedisStores } = await importAdapter('redis', LOADERS.redis);
      return createRedisStores({ url: spec.url, prefix: spec.prefix, clock });
    }
    case 'adapter': {
      const factory = await resolveStoreAdapter(spec.scheme);
      return factory(
        { scheme: spec.scheme, location: spec.location, input: spec.input },
        { role, ...(clock ? { clock } : {}) },
      );
    }
  }
}
