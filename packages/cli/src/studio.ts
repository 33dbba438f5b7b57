import { importAdapter, LOADERS } from './adapters.js';
import { parseBackend } from './backends.js';
import { UsageError } from './errors.js';
import { type McpIo, openMemory, signalled } from './mcp.js';

/** What `kioku studio` was given (node:util parseArgs values). */
export interface StudioValues {
  store?: string;
  host?: string;
  port?: string;
  'read-only'?: boolean;
  /** Start a new, empty store when --store names none (without it, a store that does not exist is refused). */
  create?: boolean;
  'allow-remote'?: boolean;
  'allow-host'?: string[];
  index?: string;
  embedder?: string;
  dimensions?: string;
}

/** The port `kioku studio` listens on unless told otherwise. */
export const STUDIO_PORT = 4983;

/**
 * `kioku studio`: serve Kioku Studio (@kioku/studio) over one store until SIGINT / SIGTERM. The address
 * with its access token goes to stdout; everything else to stderr.
 */
export async function serveStudioCommand(values: StudioValues, io: McpIo): Promise<number> {
  const store = values.store;
  if (store === undefined || store.trim() === '') {
    throw new UsageError('--store is required, e.g. --store sqlite:./kioku.db.');
  }
  const spec = parseBackend(store);
  if ((values.index === undefined) !== (values.embedder === undefined)) {
    throw new UsageError('Hybrid search needs both --index <index> and --embedder <embedder>, or neither.');
  }
  const port = values.port === undefined ? STUDIO_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port takes a port number (0 picks a free one), not "${values.port}".`);
  }
  const studio = await importAdapter('studio', LOADERS.studio);
  if (values.host !== undefined && !studio.isLoopback(values.host) && !values['allow-remote']) {
    throw new UsageError(
      `Refusing to listen on ${values.host}: anyone who reaches it with the token could read and erase memory. Add --allow-remote to mean it (and put it behind TLS).`,
    );
  }
  const readOnly = values['read-only'] === true;
  if (readOnly && values.create) {
    throw new UsageError(
      '--read-only writes nothing and --create writes a new store: give one or the other.',
    );
  }
  // A mistyped store is refused rather than served empty, unless --create asks for a new one. Read-only
  // studio runs no backend's setup (it would migrate, switch SQLite to WAL, create tables: writes).
  const stores = await openMemory(store, values, io, values.create ? 'target' : 'source', !readOnly);
  const stop = signalled();
  try {
    // A registered adapter has no native directory reader: the studio lists users from its snapshots.
    const directory = await studio.openDirectory(spec.type === 'adapter' ? { type: 'stores', stores } : spec);
    const running = await studio
      .serveStudio({
        stores,
        directory,
        storeLabel: spec.label,
        backend: spec.type,
        port,
        ...(values.host === undefined ? {} : { host: values.host }),
        readOnly: values['read-only'] === true,
        allowRemote: values['allow-remote'] === true,
        ...(values['allow-host'] ? { allowHosts: values['allow-host'] } : {}),
      })
      .catch(async (error: unknown) => {
        await directory.close();
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new UsageError(`Port ${port} is in use: give another with --port (0 picks a free one).`);
        }
        throw error;
      });
    io.stdout.write(`Kioku Studio: ${running.url}\n`);
    io.stderr.write(
      `kioku studio: serving ${spec.label}${values['read-only'] ? ' read-only' : ''}; open the address above (it carries the access token). Ctrl-C stops it.\n`,
    );
    await stop.promise;
    await running.close();
    return 0;
  } finally {
    stop.dispose();
    await stores.close().catch(() => {});
  }
}
