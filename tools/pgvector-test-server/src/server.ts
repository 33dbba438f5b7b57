import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgvectorTestServerOptions {
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
  /** Client connections served at once (default 16); PGlite still runs one query at a time. */
  maxConnections?: number;
}

export interface PgvectorTestServer {
  /** A `postgres://` URL for any PostgreSQL client (postgres.js, psql). */
  readonly url: string;
  /** The PGlite instance behind the socket (for checks that bypass the wire protocol). */
  readonly db: PGlite;
  stop(): Promise<void>;
}

/**
 * PostgreSQL with pgvector in this process: PGlite (PostgreSQL in WASM, in memory) with its pgvector
 * extension loaded, served over the PostgreSQL wire protocol by `@electric-sql/pglite-socket`. The
 * extension is available but not created: `CREATE EXTENSION vector` is the client's job, as on a server.
 *
 * One database, one backend: every connection shares one session (one query at a time, a transaction
 * keeps the others waiting), so session settings (`SET`) leak between connections — use `SET LOCAL`.
 */
export async function startPgvectorTestServer(
  options: PgvectorTestServerOptions = {},
): Promise<PgvectorTestServer> {
  const db = await PGlite.create({ extensions: { vector } });
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? 16,
  });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    db,
    stop() {
      stopped ??= server.stop().then(() => db.close());
      return stopped;
    },
  };
}
