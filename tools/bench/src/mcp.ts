/**
 * Kioku's MCP server under concurrent clients: `--clients` SDK clients over Streamable HTTP on loopback,
 * each a user of its own (a bearer token each), store and search for `--seconds`, then every record is
 * checked: each one stored is there, readable by its user, and invisible to the next user.
 *
 *   pnpm bench:mcp [--clients 8] [--seconds 10] [--store sqlite|json|memory] [--json]
 *
 * Each client loops: store_memory (a short log with a marker of its own and a few random words), then
 * search_memory for its marker. A search result that is not one of the client's own records counts as a
 * crossing; a record that was acknowledged but is not in the store (or not readable by its user) counts as
 * lost. Latency is per MCP call as the client sees it (one HTTP request each: the server is stateless).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInMemoryStores, type KiokuStores } from '@kioku/core';
import { memoryTools, newToken, serveHttp, TokenTable } from '@kioku/mcp';
import { createJsonStores } from '@kioku/store-json';
import { createSqliteStores } from '@kioku/store-sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cliArgs, flagValue, percentile, randomPicks, round, table } from './util.js';

type StoreKind = 'sqlite' | 'json' | 'memory';

const WORDS =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa'.split(
    ' ',
  );

interface Op {
  name: 'store_memory' | 'search_memory';
  ms: number;
}

interface ClientRun {
  user: string;
  ops: Op[];
  stored: string[];
  crossed: number;
  errors: string[];
}

async function openStores(kind: StoreKind, dir: string): Promise<KiokuStores> {
  if (kind === 'memory') return createInMemoryStores();
  const stores =
    kind === 'json'
      ? createJsonStores({ directory: path.join(dir, 'data') })
      : createSqliteStores({ file: path.join(dir, 'kioku.db') });
  await stores.setup();
  return stores;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'kioku-bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function timed(run: ClientRun, client: Client, name: Op['name'], args: Record<string, unknown>) {
  const start = performance.now();
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  run.ops.push({ name, ms: performance.now() - start });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

async function drive(
  url: string,
  token: string,
  user: string,
  index: number,
  until: number,
): Promise<ClientRun> {
  const run: ClientRun = { user, ops: [], stored: [], crossed: 0, errors: [] };
  const client = await connect(url, token);
  const word = randomPicks(WORDS, index + 1);
  const marker = `marker${index}x`;
  try {
    for (let n = 0; performance.now() < until; n++) {
      const content = `${marker} run ${n}: ${word()} ${word()} ${word()}\n${'log line\n'.repeat(20)}`;
      const { id } = await timed(run, client, 'store_memory', { content, description: `${marker} run ${n}` });
      run.stored.push(id as string);
      const found = await timed(run, client, 'search_memory', { query: marker, limit: 10 });
      const own = new Set(run.stored);
      for (const hit of found.details as Array<{ id: string }>) if (!own.has(hit.id)) run.crossed++;
    }
  } catch (error) {
    run.errors.push((error as Error).message);
  } finally {
    await client.close();
  }
  return run;
}

/** Every acknowledged record is in the store, readable by its user over MCP, and not by the next user. */
async function audit(url: string, stores: KiokuStores, runs: ClientRun[], tokens: string[]) {
  let lost = 0;
  let crossed = 0;
  for (const [i, run] of runs.entries()) {
    const listed = new Set((await stores.details.list({ userId: run.user })).map((d) => d.id));
    lost += run.stored.filter((id) => !listed.has(id)).length;
    crossed += listed.size - run.stored.filter((id) => listed.has(id)).length;
    const owner = await connect(url, tokens[i]!);
    const other = await connect(url, tokens[(i + 1) % tokens.length]!);
    for (const id of run.stored.filter((_, n) => n % 10 === 0)) {
      const mine = (await owner.callTool({ name: 'retrieve_memory', arguments: { id } })) as CallToolResult;
      if (mine.isError) lost++;
      const theirs = (await other.callTool({ name: 'retrieve_memory', arguments: { id } })) as CallToolResult;
      if (!theirs.isError) crossed++;
    }
    await owner.close();
    await other.close();
  }
  return { lost, crossed };
}

async function main() {
  const args = cliArgs();
  const clients = Number(flagValue(args, '--clients') ?? 8);
  const seconds = Number(flagValue(args, '--seconds') ?? 10);
  const kind = (flagValue(args, '--store') ?? 'sqlite') as StoreKind;
  if (!['sqlite', 'json', 'memory'].includes(kind)) throw new Error('--store is sqlite, json or memory');
  if (!Number.isInteger(clients) || clients < 2) throw new Error('--clients takes an integer of at least 2');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-mcp-'));
  const stores = await openStores(kind, dir);
  const users = Array.from({ length: clients }, (_, i) => `user${i}`);
  const tokens = users.map(() => newToken().token);
  const table_ = TokenTable.parse(
    JSON.stringify({ tokens: users.map((user, i) => ({ user, token: tokens[i] })) }),
  );
  const server = await serveHttp({
    stores,
    tools: memoryTools(stores),
    host: '127.0.0.1',
    port: 0,
    auth: { tokens: table_ },
  });
  try {
    const started = performance.now();
    const until = started + seconds * 1000;
    const runs = await Promise.all(users.map((user, i) => drive(server.url, tokens[i]!, user, i, until)));
    const elapsed = (performance.now() - started) / 1000;
    const checks = await audit(server.url, stores, runs, tokens);
    const crossed = checks.crossed + runs.reduce((sum, r) => sum + r.crossed, 0);
    const errors = runs.flatMap((r) => r.errors);

    const rows = (['store_memory', 'search_memory'] as const).map((name) => {
      const ms = runs
        .flatMap((r) => r.ops.filter((o) => o.name === name).map((o) => o.ms))
        .sort((a, b) => a - b);
      return {
        op: name,
        count: ms.length,
        perSecond: round(ms.length / elapsed, 0),
        p50: round(percentile(ms, 50), 2),
        p95: round(percentile(ms, 95), 2),
        p99: round(percentile(ms, 99), 2),
        max: round(ms.at(-1) ?? Number.NaN, 2),
      };
    });
    const stored = runs.reduce((sum, r) => sum + r.stored.length, 0);
    console.log(
      `Kioku MCP over Streamable HTTP: ${clients} clients (one user each), ${round(elapsed, 1)} s, ${kind} store, loopback\n`,
    );
    console.log(
      table(
        ['op', 'calls', 'calls/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
        rows.map((r) => [r.op, r.count, r.perSecond, r.p50, r.p95, r.p99, r.max]),
      ),
    );
    console.log(
      `\nrecords stored: ${stored}; lost: ${checks.lost}; crossed users: ${crossed}; client errors: ${errors.length}`,
    );
    for (const error of errors.slice(0, 5)) console.log(`  error: ${error}`);
    if (args.includes('--json')) {
      console.log(
        JSON.stringify({
          bench: 'mcp',
          clients,
          seconds: round(elapsed, 2),
          store: kind,
          ops: rows,
          stored,
          lost: checks.lost,
          crossed,
          errors: errors.length,
        }),
      );
    }
    if (checks.lost > 0 || crossed > 0 || errors.length > 0) process.exitCode = 1;
  } finally {
    await server.close();
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
