import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { studioApp } from './app.js';
import { newBasePath } from './base-path.js';
import type { Studio } from './context.js';
import { openDirectory, type UserDirectory } from './directory/index.js';
import { KiokuBuilder, type KiokuStores, redactUrl, ValidationError } from './kioku.js';
import { TurnLedgerLog } from './ledgers.js';
import { Receipts } from './receipts.js';
import { allowedHosts, formToken, type Guard, isLoopback, newAccessToken } from './security.js';

export interface StudioOptions {
  /** The memory to show (`openStores(spec)` of @kioku/cli, or any adapter's bundle). */
  stores: KiokuStores;
  /** Who is in the store; by default read from full snapshots (fine for small stores, slow for big ones). */
  directory?: UserDirectory;
  /** What the header shows as the store (credentials removed). */
  storeLabel?: string;
  /** The backend's name in erasure receipts (`sqlite`, `postgres`, …; default `stores`). */
  backend?: string;
  /** Address to listen on: 127.0.0.1 by default. Any other needs `allowRemote`. */
  host?: string;
  /** Port; 0 (the default) picks a free one. */
  port?: number;
  /** Refuse every change (no forms are shown, and every POST is refused). */
  readOnly?: boolean;
  /** Allow a non-loopback `host`: anyone who reaches it and has the token can read and erase memory. */
  allowRemote?: boolean;
  /** More Host names to answer to (a name the machine is reached by), besides the loopback names. */
  allowHosts?: readonly string[];
  /** The access token; a random one by default (give one only to reuse it across restarts). */
  token?: string;
}

export interface RunningStudio {
  /** The address to open: Studio's random path, with the access token. */
  url: string;
  /** `http://host:port`, no path. */
  origin: string;
  /** Studio's pages without the token: the origin and the random path (`${address}/users/…`). */
  address: string;
  token: string;
  close(): Promise<void>;
}

/**
 * Serve Kioku Studio over `stores` until `close()`. Listens on 127.0.0.1 unless told otherwise; the access
 * token (random unless given) is in the returned `url` and must reach every request (see `security.ts`).
 */
export async function serveStudio(options: StudioOptions): Promise<RunningStudio> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && !options.allowRemote) {
    throw new ValidationError(
      `Refusing to listen on ${host}: anyone who can reach it could read and erase memory with the token. Listen on 127.0.0.1, or allow it explicitly (allowRemote, --allow-remote).`,
    );
  }
  const token = options.token ?? newAccessToken();
  if (token.length < 16) throw new ValidationError('The access token must have at least 16 characters.');
  const directory = options.directory ?? (await openDirectory({ type: 'stores', stores: options.stores }));
  const readOnly = options.readOnly === true;
  // Whatever the caller passed, a password or secret query parameter never reaches the page header.
  const storeLabel = redactUrl(options.storeLabel ?? 'stores');
  const csrf = formToken(token);
  const studio: Studio = {
    stores: options.stores,
    kioku: new KiokuBuilder({ stores: options.stores }).build(),
    directory,
    ledgers: new TurnLedgerLog(options.stores.sessions),
    receipts: new Receipts(),
    backend: options.backend ?? 'stores',
    page: () => ({ csrf, readOnly, storeLabel }),
  };
  // The guard needs the port, known only once listening: the app reads it through this object.
  const guard: Guard = {
    token,
    session: newAccessToken(),
    base: newBasePath(),
    hosts: new Set(),
    cookie: 'kioku-studio',
    readOnly,
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: studioApp(studio, guard).fetch, hostname: host, port: options.port ?? 0 }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  guard.hosts = allowedHosts(host, port, options.allowHosts);
  guard.cookie = `kioku-studio-${port}`;
  const shown = host.includes(':') ? `[${host}]` : host;
  const origin = `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${port}`;
  const address = `${origin}${guard.base}`;
  return {
    url: `${address}/?token=${token}`,
    origin,
    address,
    token,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await studio.kioku.close();
      await directory.close();
    },
  };
}
