import { readFile, stat } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { type ChatModel, type Clock, type KiokuStores, withEmbeddings } from '@kioku/core';
import { redactUrl } from '@kioku/core/adapter';
import type { BackgroundQueue } from '@kioku/core/passes';
import { IdSchema, traceStores } from '@kioku/core/store';
import type { HttpAuth, McpIdentity, McpLimits } from '@kioku/mcp';
import { importAdapter, LOADERS } from './adapters.js';
import { parseBackend } from './backends.js';
import { loadEmbedder, parseEmbedder } from './embedders.js';
import { UsageError } from './errors.js';
import { openIndex, parseIndex } from './indexes.js';
import { loadChatModel } from './models.js';
import { openStores } from './stores.js';
import { startTelemetry, type TelemetryHandle } from './telemetry.js';

/** What `kioku mcp` was given (node:util parseArgs values). */
export interface McpValues {
  store?: string;
  user?: string;
  agent?: string;
  thread?: string;
  tools?: string;
  http?: string;
  tokens?: string;
  'allow-origin'?: string[];
  'allow-host'?: string[];
  'max-body'?: string;
  'max-output'?: string;
  index?: string;
  embedder?: string;
  dimensions?: string;
  enrich?: string;
  /** Start a new, empty store when --store names none (without it, a store that does not exist is refused). */
  create?: boolean;
}

export interface McpIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  clock?: Clock;
}

type Mcp = typeof import('@kioku/mcp');

function id(value: string, option: string): string {
  const result = IdSchema.safeParse(value);
  if (!result.success) {
    throw new UsageError(
      `${option} "${value}" is not a valid id: ${result.error.issues[0]?.message ?? 'invalid'}.`,
    );
  }
  return result.data;
}

/** `1048576`, `512k`, `4m` (KiB, MiB) → bytes. */
export function parseBytes(text: string, option: string): number {
  const match = /^(\d+)\s*([km]i?b?)?$/i.exec(text.trim());
  if (!match) throw new UsageError(`${option} takes a size in bytes, e.g. ${option} 1048576, 512k or 4m.`);
  const unit = match[2]?.[0]?.toLowerCase();
  return Number(match[1]) * (unit === 'm' ? 1024 * 1024 : unit === 'k' ? 1024 : 1);
}

/** A Kioku error from @kioku/mcp about an argument (a toolset, an address) as a usage error. */
function asUsage<T>(fn: () => T, option: string): T {
  try {
    return fn();
  } catch (error) {
    throw new UsageError(`${option}: ${(error as Error).message}`);
  }
}

/** How often a server checks that the process that started it is still there. */
const PARENT_CHECK_MS = 1000;

/**
 * Resolves on SIGINT, SIGTERM, or when the process that started this one is gone (its parent pid
 * changes: the process was handed to init or a subreaper). \`pnpm kioku studio\` and \`npx kioku …\` do not
 * forward SIGTERM to the server they started, so without this a stopped parent leaves the server running.
 */
export function signalled(): { promise: Promise<string>; dispose(): void } {
  let dispose = () => {};
  const promise = new Promise<string>((resolve) => {
    const on = (signal: string) => resolve(signal);
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid !== parent) resolve('parent exited');
    }, PARENT_CHECK_MS).unref();
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
    dispose = () => {
      clearInterval(watch);
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    };
  });
  return { promise, dispose };
}

/** Read and check the tokens file before anything is opened; warn when others may read it. */
async function readTokens(mcp: Mcp, file: string, io: McpIo) {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `Cannot read --tokens ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}.`,
    );
  }
  const tokens = mcp.TokenTable.parse(text, file);
  const { mode } = await stat(file);
  if (process.platform !== 'win32' && (mode & 0o077) !== 0 && /"token"\s*:/.test(text)) {
    io.stderr.write(
      `kioku mcp: warning: ${file} holds tokens and other users may read it (chmod 600 ${file}, or keep only "sha256" entries).\n`,
    );
  }
  return tokens;
}

/** `--store`, checked (and `--index` with `--embedder`) before anything is read or opened. */
function storeSpec(values: McpValues): string {
  const store = values.store;
  if (store === undefined || store.trim() === '') {
    throw new UsageError('--store is required, e.g. --store sqlite:./kioku.db.');
  }
  parseBackend(store);
  if ((values.index === undefined) !== (values.embedder === undefined)) {
    throw new UsageError('Hybrid search needs both --index <index> and --embedder <embedder>, or neither.');
  }
  return store;
}

/** A store that does not exist is refused (a typo'd client config must not serve an empty memory). */
function roleOf(values: McpValues): 'source' | 'target' {
  return values.create ? 'target' : 'source';
}

export async function openMemory(
  store: string,
  values: Pick<McpValues, 'index' | 'embedder' | 'dimensions'>,
  io: McpIo,
  /** `source`: the store must exist (NOT_FOUND otherwise); `target`: a missing one is created (--create). */
  role: 'source' | 'target',
  /** false: no backend's `setup()` runs (nothing is created, migrated or switched to WAL: read-only use). */
  setup = true,
): Promise<KiokuStores> {
  const stores = await openStores(store, { role, setup, ...(io.clock ? { clock: io.clock } : {}) });
  if (values.index === undefined || values.embedder === undefined) return stores;
  try {
    const embedder = await loadEmbedder(parseEmbedder(values.embedder, values.dimensions));
    const opened = await openIndex(parseIndex(values.index), embedder.dimensions);
    await opened.setup();
    return withEmbeddings(stores, { embedder, index: opened.index });
  } catch (error) {
    await stores.close().catch(() => {});
    throw error;
  }
}

type Toolsets = ReturnType<Mcp['parseToolsets']>;

interface Serving {
  mcp: Mcp;
  store: string;
  toolsets: Toolsets;
  limits: Partial<McpLimits>;
  identity: McpIdentity | undefined;
  /** save_memory's background enrichment (`--enrich <model>`): its queue is closed when serving stops. */
  enrichment: { model: ChatModel; background: BackgroundQueue } | undefined;
  telemetry: TelemetryHandle | undefined;
}

/** `--enrich <model>`: the model and a queue whose failures are reported on stderr. */
async function enrichmentOf(values: McpValues, io: McpIo): Promise<Serving['enrichment']> {
  if (values.enrich === undefined) return undefined;
  const model = await loadChatModel(values.enrich, 'kioku mcp --enrich');
  const { BackgroundQueue } = await import('@kioku/core/passes');
  const background = new BackgroundQueue({
    onEvent: (event) => {
      if (event.type === 'failed')
        io.stderr.write(`kioku mcp: enrichment failed (${event.code}): ${event.message}\n`);
    },
  });
  return { model, background };
}

/**
 * `kioku mcp`: serve one store's memory over MCP until stdin closes (stdio) or SIGINT / SIGTERM. The human
 * messages go to stderr; over stdio, stdout carries only the protocol.
 */
export async function serveMcp(values: McpValues, io: McpIo): Promise<number> {
  const store = storeSpec(values);
  const mcp = await importAdapter('mcp', LOADERS.mcp);
  const toolsets = asUsage(() => mcp.parseToolsets(values.tools ?? 'details'), '--tools');
  const limits = {
    ...(values['max-body'] === undefined
      ? {}
      : { maxBodyBytes: parseBytes(values['max-body'], '--max-body') }),
    ...(values['max-output'] === undefined
      ? {}
      : { maxOutputBytes: parseBytes(values['max-output'], '--max-output') }),
  };
  asUsage(() => mcp.McpLimitsSchema.parse(limits), '--max-body / --max-output');
  const identity =
    values.user === undefined
      ? undefined
      : {
          userId: id(values.user, '--user'),
          ...(values.agent === undefined ? {} : { agentId: id(values.agent, '--agent') }),
          ...(values.thread === undefined ? {} : { threadId: id(values.thread, '--thread') }),
        };
  if (identity === undefined && (values.agent !== undefined || values.thread !== undefined)) {
    throw new UsageError('--agent and --thread go with --user (with --tokens, each token names its own).');
  }
  const enrichment = await enrichmentOf(values, io);
  // Store calls become spans and metrics when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  const telemetry = await startTelemetry('kioku-mcp');
  if (telemetry)
    io.stderr.write(
      `kioku mcp: exporting OpenTelemetry traces and metrics to ${redactUrl(telemetry.endpoint)}\n`,
    );
  const serving = { mcp, store, toolsets, limits, identity, enrichment, telemetry };
  try {
    return await (values.http === undefined ? overStdio(serving, values, io) : overHttp(serving, values, io));
  } finally {
    await telemetry?.shutdown();
  }
}

async function overStdio(
  { mcp, store, toolsets, limits, identity, enrichment }: Serving,
  values: McpValues,
  io: McpIo,
) {
  if (values.tokens !== undefined)
    throw new UsageError('--tokens is for --http; over stdio give --user <id>.');
  if (values['allow-origin'] || values['allow-host']) {
    throw new UsageError('--allow-origin and --allow-host are for --http.');
  }
  if (!identity) {
    throw new UsageError('Say whose memory to serve: --user <id> (over stdio the user is fixed at start).');
  }
  const stores = traceStores(await openMemory(store, values, io, roleOf(values)));
  const stop = signalled();
  try {
    const server = await mcp.serveStdio({
      stores,
      tools: mcp.memoryTools(stores, toolsets, enrichment ? { enrichment } : {}),
      identity,
      limits,
      stdin: io.stdin as Readable,
      stdout: io.stdout as Writable,
      onError: (error) => io.stderr.write(`kioku mcp: ${redactUrl(error.message)}\n`),
    });
    const agent = identity.agentId ? ` (agent "${identity.agentId}")` : '';
    io.stderr.write(
      `kioku mcp: serving user "${identity.userId}"${agent} over stdio; tools: ${toolsets.join(', ')}\n`,
    );
    await Promise.race([server.closed, stop.promise]);
    await server.close();
    // A connection closed by the server (a message over --max-body) leaves stdin open: end the process.
    (io.stdin as Readable).destroy();
    return 0;
  } finally {
    stop.dispose();
    // Enrichments under way finish (or are abandoned, the saved memory kept as saved) before the store closes.
    await enrichment?.background.close().catch(() => {});
    await stores.close().catch(() => {});
  }
}

async function overHttp(
  { mcp, store, toolsets, limits, identity, enrichment }: Serving,
  values: McpValues,
  io: McpIo,
) {
  const address = asUsage(() => mcp.parseListenAddress(values.http!), '--http');
  if (identity && values.tokens !== undefined) {
    throw new UsageError(
      'Give --tokens <file> (a user per token) or --user <id> (one user, loopback only), not both.',
    );
  }
  if (!identity && values.tokens === undefined) {
    throw new UsageError(
      '--http needs --tokens <file>: each bearer token names one user (see "kioku mcp --help").',
    );
  }
  if (identity && !mcp.isLoopback(address.host)) {
    throw new UsageError(
      `Refusing to serve ${address.host} without tokens: anyone who can reach it would be user "${identity.userId}". Give --tokens <file>, or listen on 127.0.0.1.`,
    );
  }
  const auth: HttpAuth = identity ? { identity } : { tokens: await readTokens(mcp, values.tokens!, io) };
  const stores = traceStores(await openMemory(store, values, io, roleOf(values)));
  const stop = signalled();
  try {
    const server = await mcp.serveHttp({
      stores,
      tools: mcp.memoryTools(stores, toolsets, enrichment ? { enrichment } : {}),
      host: address.host,
      port: address.port,
      auth,
      limits,
      ...(values['allow-origin'] ? { allowedOrigins: values['allow-origin'] } : {}),
      ...(values['allow-host'] ? { allowedHosts: values['allow-host'] } : {}),
      onError: (error) =>
        io.stderr.write(`kioku mcp: ${redactUrl((error as Error)?.message ?? String(error))}\n`),
    });
    const who =
      'tokens' in auth
        ? `${auth.tokens.size} token${auth.tokens.size === 1 ? '' : 's'}`
        : `user "${auth.identity.userId}", no token`;
    io.stderr.write(`kioku mcp: listening on ${server.url} (${who}; tools: ${toolsets.join(', ')})\n`);
    if (!mcp.isLoopback(address.host)) {
      io.stderr.write(
        'kioku mcp: this is plain HTTP: put it behind TLS (a reverse proxy) before clients reach it over a network.\n',
      );
    }
    await stop.promise;
    await server.close();
    return 0;
  } finally {
    stop.dispose();
    // Enrichments under way finish (or are abandoned, the saved memory kept as saved) before the store closes.
    await enrichment?.background.close().catch(() => {});
    await stores.close().catch(() => {});
  }
}

/** `kioku mcp token`: a new random token and the tokens-file entry that names its user by hash. */
export async function newTokenEntry(values: { user?: string; agent?: string; thread?: string }, io: McpIo) {
  if (values.user === undefined)
    throw new UsageError('kioku mcp token needs --user <id>: the user the token names.');
  const mcp = await importAdapter('mcp', LOADERS.mcp);
  const { token, sha256 } = mcp.newToken();
  const entry = {
    user: id(values.user, '--user'),
    ...(values.agent === undefined ? {} : { agent: id(values.agent, '--agent') }),
    ...(values.thread === undefined ? {} : { thread: id(values.thread, '--thread') }),
    sha256,
  };
  io.stdout.write(
    `Token (give it to the client as "Authorization: Bearer <token>"; it is shown only now):\n  ${token}\n` +
      `Entry for the tokens file (it holds only the token's SHA-256):\n  ${JSON.stringify(entry)}\n`,
  );
  return 0;
}
