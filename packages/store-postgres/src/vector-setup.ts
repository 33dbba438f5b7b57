import { UnsupportedError, ValidationError } from '@kioku/core';
import type { Sql, TransactionSql } from 'postgres';

/** The oldest pgvector with HNSW indexes. */
const MIN_VERSION = [0, 5, 0];
/** The first pgvector with iterative index scans (`hnsw.iterative_scan`), which keep filtered queries full. */
const ITERATIVE_SCAN_VERSION = [0, 8, 0];

function atLeast(version: string, wanted: readonly number[]): boolean {
  const parts = version.split('.').map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < wanted.length; i++) {
    const have = parts[i] ?? 0;
    if (have !== wanted[i]) return have > wanted[i]!;
  }
  return true;
}

/** Where `client` connects, without a password: what error messages name. */
export function describeServer(client: Sql): string {
  const o = client.options as { host?: string[]; port?: number[]; user?: string; database?: string };
  const host = o.host?.[0] ?? 'localhost';
  const port = o.port?.[0] ?? 5432;
  return `postgres://${o.user ? `${o.user}@` : ''}${host}:${port}/${o.database ?? ''}`;
}

const sqlState = (error: unknown) =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

export interface PgvectorInfo {
  version: string;
  /** pgvector ≥ 0.8: `hnsw.iterative_scan` exists. */
  iterativeScan: boolean;
}

/**
 * Make sure pgvector is created in the database (`CREATE EXTENSION IF NOT EXISTS vector`) and new enough
 * for HNSW (run it under a lock: see PostgresVectorIndex.setup). A server without pgvector, a role that may not create it, or a version before 0.5 is an
 * UnsupportedError naming the server and what to do.
 */
export async function ensurePgvector(client: TransactionSql, server: string): Promise<PgvectorInfo> {
  let version = await installedVersion(client);
  if (version === undefined) {
    try {
      await client`create extension if not exists vector`;
    } catch (error) {
      throw missingExtension(server, sqlState(error), error);
    }
    version = await installedVersion(client);
  }
  if (version === undefined || !atLeast(version, MIN_VERSION)) {
    throw new UnsupportedError(
      `pgvector ${version ?? '(unknown)'} on ${server} has no HNSW index: Kioku's PostgreSQL vector index needs pgvector 0.5 or newer (0.8+ recommended). Run ALTER EXTENSION vector UPDATE after upgrading the package on the server.`,
      { details: { server, version: version ?? null } },
    );
  }
  return { version, iterativeScan: atLeast(version, ITERATIVE_SCAN_VERSION) };
}

async function installedVersion(client: Sql | TransactionSql): Promise<string | undefined> {
  const rows = await client<
    { v: string }[]
  >`select extversion as v from pg_extension where extname = 'vector'`;
  return rows[0]?.v;
}

/** The pgvector created in the database, if any (nothing is created). */
export async function readPgvector(client: Sql): Promise<PgvectorInfo | undefined> {
  const version = await installedVersion(client);
  return version === undefined
    ? undefined
    : { version, iterativeScan: atLeast(version, ITERATIVE_SCAN_VERSION) };
}

function missingExtension(server: string, code: unknown, cause: unknown): UnsupportedError {
  const message = cause instanceof Error ? cause.message : String(cause);
  const what =
    code === '42501'
      ? `the role may not create it (${message}). Have a superuser or the database owner run CREATE EXTENSION vector once in that database`
      : `CREATE EXTENSION vector failed (${message}). Install pgvector 0.5 or newer (0.8+ recommended) on the server — e.g. the postgresql-<version>-pgvector package, or the pgvector/pgvector Docker image — or use no vector index on PostgreSQL (Kioku's other stores need no extension)`;
  return new UnsupportedError(`pgvector is not available on ${server}: ${what}.`, {
    cause,
    details: { server, code: typeof code === 'string' ? code : null },
  });
}

/**
 * Create the vectors table and its indexes in `schema` when they are missing, and check that an existing
 * table holds vectors of `dimensions`.
 */
export async function createVectorTable(
  client: TransactionSql,
  schema: string,
  table: string,
  dimensions: number,
): Promise<void> {
  const qualified = `"${schema}"."${table}"`;
  await client.unsafe(`create schema if not exists "${schema}"`);
  await client.unsafe(`create table if not exists ${qualified} (
    user_id text not null,
    agent_id text not null,
    id text not null,
    kind text not null,
    model text,
    payload jsonb not null,
    embedding vector(${dimensions}) not null,
    primary key (user_id, agent_id, id)
  )`);
  const [column] = await client<{ type: string | null }[]>`
    select format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a
    where a.attrelid = ${qualified}::regclass and a.attname = 'embedding' and not a.attisdropped`;
  if (column?.type !== `vector(${dimensions})`) {
    throw new ValidationError(
      `Table ${qualified} holds ${column?.type ?? 'no embedding column'}; this index is configured for vector(${dimensions}). Use another table (option \`table\`), or reembed into a new one.`,
      { details: { table: `${schema}.${table}`, expected: dimensions, actual: column?.type ?? null } },
    );
  }
  await client.unsafe(
    `create index if not exists "${table}_hnsw" on ${qualified} using hnsw (embedding vector_cosine_ops)`,
  );
  await client.unsafe(
    `create index if not exists "${table}_kind_idx" on ${qualified} (user_id, agent_id, kind)`,
  );
}
