import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newToken } from '@kioku/mcp';
import { type Reply, startScriptedServer, text } from '@kioku/openai-test-server';
import { type QdrantTestServer, startQdrantTestServer } from '@kioku/qdrant-test-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  kioku,
  kiokuArgv,
  kiokuInProcess,
  packageDir,
  pgBackend,
  pgUrl,
  redisBackend,
  redisUrl,
  tempDir,
} from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const open: Array<() => Promise<unknown>> = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
  await cleanup();
});

/** `kioku mcp <args>` as a real child process over stdio, driven by the SDK's client. */
async function stdio(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: kiokuArgv(['mcp', ...args]),
    cwd: packageDir,
    env: { ...process.env, KIOKU_DEBUG: '', ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'kioku-cli-test', version: '1.0.0' });
  await client.connect(transport);
  open.push(() => client.close());
  return client;
}

interface HttpProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** `kioku mcp --http 127.0.0.1:0 …` as a child process; resolves once it prints where it listens. */
function http(args: string[]): Promise<HttpProcess> {
  const child = spawn(process.execPath, kiokuArgv(['mcp', '--http', '127.0.0.1:0', ...args]), {
    cwd: packageDir,
    env: { ...process.env, KIOKU_DEBUG: '' },
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  open.push(stop);
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const url = /listening on (\S+)/.exec(stderr)?.[1];
      if (url) resolve({ url, child, stderr: () => stderr, stop });
    });
    void exited.then((code) => reject(new Error(`kioku mcp exited with ${code}: ${stderr}`)));
  });
}

async function httpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'kioku-cli-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  open.push(() => client.close());
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

async function errorCode(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  return (JSON.parse((result.content[0] as { text: string }).text) as { error: { code: string } }).error.code;
}

/** Store, search and retrieve through a client; the id stored. */
async function roundTrip(client: Client, word: string): Promise<string> {
  const content = `${word} report\n${'line of output\n'.repeat(50)}`;
  const { id } = (await call(client, 'store_memory', { content, description: `${word} report` })) as {
    id: string;
  };
  const found = (await call(client, 'search_memory', { query: `${word} report` })) as {
    details: Array<{ id: string }>;
  };
  expect(found.details.map((d) => d.id)).toEqual([id]);
  // Quoted with its id and source: data, not instructions.
  expect(await call(client, 'retrieve_memory', { id })).toEqual({
    content: `[MEMORY_DETAIL ${id} from note]\n${content}\n[END_MEMORY_DETAIL]`,
  });
  return id;
}

describe('kioku mcp over stdio', () => {
  it('round-trips, and the memory is there after a restart (JSON)', async () => {
    const store = `json:${path.join(dir, 'data')}`;
    const first = await stdio(['--store', store, '--user', 'alice', '--create']);
    expect((await first.listTools()).tools.map((t) => t.name)).toEqual([
      'store_memory',
      'retrieve_memory',
      'search_memory',
    ]);
    const id = await roundTrip(first, 'alpha');
    await first.close();

    const second = await stdio(['--store', store, '--user', 'alice']);
    expect(await call(second, 'retrieve_memory', { id })).toMatchObject({
      content: expect.stringMatching(/^\[MEMORY_DETAIL \w+ from note\]\nalpha report/),
    });
    const other = await stdio(['--store', store, '--user', 'bob']);
    expect(await errorCode(other, 'retrieve_memory', { id })).toBe('NOT_FOUND');
  });

  it('round-trips on SQLite and survives a restart', async () => {
    const store = `sqlite:${path.join(dir, 'kioku.db')}`;
    const client = await stdio(['--store', store, '--user', 'alice', '--create', '--tools', 'details,facts']);
    const id = await roundTrip(client, 'bravo');
    // Query syntax and SQL in a search are words to look for, nothing more.
    const hostile = `bravo" OR * NEAR(x) ^report); DROP TABLE details; --`;
    const found = (await call(client, 'search_memory', { query: hostile })) as {
      details: Array<{ id: string }>;
    };
    expect(found.details.map((d) => d.id)).toEqual([id]);
    const again = await stdio(['--store', store, '--user', 'alice']);
    expect(await call(again, 'retrieve_memory', { id })).toMatchObject({
      content: expect.stringMatching(/^\[MEMORY_DETAIL \w+ from note\]\nbravo/),
    });
  });

  it.skipIf(pgUrl === '')('round-trips on PostgreSQL', async () => {
    await roundTrip(await stdio(['--store', pgBackend(), '--user', 'alice', '--create']), 'charlie');
  });

  it.skipIf(redisUrl === '')('round-trips on Redis', async () => {
    await roundTrip(await stdio(['--store', redisBackend(), '--user', 'alice', '--create']), 'delta');
  });

  it('closes the connection on a message over --max-body, and keeps nothing of it', async () => {
    const store = `json:${path.join(dir, 'data')}`;
    const client = await stdio(['--store', store, '--user', 'alice', '--create', '--max-body', '4k']);
    await expect(
      client.callTool({
        name: 'store_memory',
        arguments: { content: 'x'.repeat(8_000), description: 'big' },
      }),
    ).rejects.toThrow();
    const again = await stdio(['--store', store, '--user', 'alice']);
    expect(await call(again, 'search_memory', { query: 'big' })).toEqual({ details: [], facts: [] });
  });

  it('refuses an edit of a fact that changed since this client read it (CONFLICT), like a conversation', async () => {
    const store = `sqlite:${path.join(dir, 'kioku.db')}`;
    const args = ['--store', store, '--user', 'alice', '--create', '--tools', 'details,facts'];
    const a = await stdio(args);
    const b = await stdio(args);
    const saved = await call(a, 'save_memory', { content: 'Works from Lisbon on Mondays' });
    const id = /Saved memory (\w+)/.exec(String(saved.text))![1]!;
    await call(b, 'search_memory', { query: 'Lisbon Mondays' });
    await call(a, 'update_memory', { id, content: 'Works from Porto on Mondays' });
    expect(await errorCode(b, 'update_memory', { id, content: 'Works from Faro on Mondays' })).toBe(
      'CONFLICT',
    );
    const found = (await call(b, 'search_memory', { query: 'Mondays' })) as {
      facts: Array<{ content: string }>;
    };
    expect(found.facts.map((f) => f.content)).toEqual(['Works from Porto on Mondays']);
  });
});

describe('kioku mcp --enrich', () => {
  it('answers save_memory before the model does, and the enrichment lands when it answers', async () => {
    // The model's answer is held until the test lets it go.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const entries = {
      entries: [
        { content: 'User works from Lisbon', category: 'personal/work', tags: ['lisbon'] },
        { content: 'User works remotely on Mondays', category: 'personal/work', tags: ['remote'] },
      ],
    };
    const route: Reply = (res, body, req) => {
      asked();
      void released.then(() => text(JSON.stringify(entries))(res, body, req));
    };
    const model = await startScriptedServer(route);
    open.push(() => model.close());
    const store = `sqlite:${path.join(dir, 'kioku.db')}`;
    const client = await stdio(
      ['--store', store, '--user', 'alice', '--create', '--tools', 'facts', '--enrich', 'scripted'],
      {
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'sk-test',
      },
    );
    const words = 'Works from Lisbon, remotely on Mondays';
    const saved = await call(client, 'save_memory', { content: words });
    expect(String(saved.text)).toMatch(/^Saved memory \w+/);
    await wasAsked;
    // The model has not answered: the words are stored as given.
    const before = (await call(client, 'search_memory', { query: 'Lisbon Mondays' })) as {
      facts: Array<{ content: string }>;
    };
    expect(before.facts.map((f) => f.content)).toEqual([words]);

    release();
    let after: string[] = [];
    while (after.length !== 2) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const found = (await call(client, 'search_memory', { query: 'Lisbon Mondays works' })) as {
        facts: Array<{ content: string }>;
      };
      after = found.facts.map((f) => f.content).sort();
    }
    expect(after).toEqual(['User works from Lisbon', 'User works remotely on Mondays']);
  });
});

describe('kioku mcp with a vector index', () => {
  let qdrant: QdrantTestServer;
  beforeAll(async () => {
    qdrant = await startQdrantTestServer();
  });
  afterAll(async () => {
    await qdrant.stop();
  });

  it('writes vectors for what it stores and searches hybrid (--index, --embedder)', async () => {
    const collection = 'mcp_hybrid';
    const client = await stdio([
      '--store',
      `sqlite:${path.join(dir, 'kioku.db')}`,
      '--user',
      'alice',
      '--create',
      '--index',
      `qdrant:${qdrant.url}?collection=${collection}`,
      '--embedder',
      'hashing:64',
    ]);
    await roundTrip(client, 'foxtrot');
    const qdrantClient = new QdrantClient({ url: qdrant.url, checkCompatibility: false });
    expect((await qdrantClient.count(collection, { exact: true })).count).toBeGreaterThan(0);
    expect(qdrant.violations, qdrant.report()).toEqual([]);
  });
});

describe('kioku mcp over HTTP', () => {
  it('serves one user per token from a tokens file and stops cleanly on SIGTERM', async () => {
    const alice = newToken();
    const bob = newToken();
    const tokens = path.join(dir, 'tokens.json');
    await writeFile(
      tokens,
      JSON.stringify({
        tokens: [
          { user: 'alice', token: alice.token },
          { user: 'bob', sha256: bob.sha256 },
        ],
      }),
    );
    await chmod(tokens, 0o600);
    const store = `sqlite:${path.join(dir, 'kioku.db')}`;
    const server = await http(['--store', store, '--tokens', tokens, '--create']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.stderr()).toContain('(2 tokens; tools: details)');
    expect(server.stderr()).not.toContain('warning');
    const id = await roundTrip(await httpClient(server.url, alice.token), 'echo');
    expect(await errorCode(await httpClient(server.url, bob.token), 'retrieve_memory', { id })).toBe(
      'NOT_FOUND',
    );
    expect((await fetch(server.url, { method: 'POST', body: '{}' })).status).toBe(401);
    expect(await server.stop()).toBe(0);

    // Restarted on the same store, alice's token still finds it.
    const again = await http(['--store', store, '--tokens', tokens]);
    expect(await call(await httpClient(again.url, alice.token), 'retrieve_memory', { id })).toMatchObject({
      content: expect.stringMatching(/^\[MEMORY_DETAIL \w+ from note\]\necho report/),
    });
  });

  it('warns when a tokens file holding tokens is readable by others', async () => {
    const tokens = path.join(dir, 'tokens.json');
    await writeFile(tokens, JSON.stringify({ tokens: [{ user: 'alice', token: newToken().token }] }));
    await chmod(tokens, 0o644);
    const server = await http(['--store', `json:${path.join(dir, 'data')}`, '--tokens', tokens, '--create']);
    expect(server.stderr()).toMatch(/warning: .*tokens\.json holds tokens and other users may read it/);
  });
});

describe('kioku mcp refuses', () => {
  it('a non-loopback address without tokens, and a weak or duplicated token, before opening anything', async () => {
    const store = `sqlite:${path.join(dir, 'never.db')}`;
    const open0 = await kiokuInProcess(['mcp', '--store', store, '--http', '0.0.0.0:0', '--user', 'alice']);
    expect(open0.code).toBe(2);
    expect(open0.stderr).toMatch(/Refusing to serve 0\.0\.0\.0 without tokens/);

    const weak = path.join(dir, 'weak.json');
    await writeFile(weak, JSON.stringify({ tokens: [{ user: 'alice', token: 'password1234' }] }));
    const weakRun = await kiokuInProcess(['mcp', '--store', store, '--http', '0.0.0.0:0', '--tokens', weak]);
    expect(weakRun.code).toBe(1);
    expect(weakRun.stderr).toMatch(
      /VALIDATION: .*weak\.json, entry 1 \(user "alice"\): the token is too weak/,
    );
    expect(weakRun.stderr).not.toContain('password1234');

    const { token } = newToken();
    const twice = path.join(dir, 'twice.json');
    await writeFile(
      twice,
      JSON.stringify({
        tokens: [
          { user: 'alice', token },
          { user: 'bob', token },
        ],
      }),
    );
    expect(
      (await kiokuInProcess(['mcp', '--store', store, '--http', '127.0.0.1:0', '--tokens', twice])).stderr,
    ).toMatch(/entry 2 \(user "bob"\): the same token as entry 1/);
    await expect(
      import('node:fs/promises').then((fs) => fs.access(path.join(dir, 'never.db'))),
    ).rejects.toThrow();
  });

  it('arguments that do not say whose memory, or mix the two ways', async () => {
    const store = `json:${path.join(dir, 'data')}`;
    const cases: Array<[string[], RegExp]> = [
      [['--store', store], /Say whose memory to serve: --user <id>/],
      [['--store', store, '--user', 'alice', '--tokens', 'x.json'], /--tokens is for --http/],
      [['--store', store, '--http', '127.0.0.1:0'], /--http needs --tokens <file>/],
      [['--store', store, '--http', '127.0.0.1:0', '--user', 'a', '--tokens', 'x.json'], /not both/],
      [['--store', store, '--user', '../etc'], /--user "\.\.\/etc" is not a valid id/],
      [
        ['--store', store, '--user', 'alice', '--tools', 'details,secrets'],
        /--tools: Unknown toolset "secrets"/,
      ],
      [['--store', store, '--user', 'alice', '--max-output', 'lots'], /--max-output takes a size in bytes/],
      [['--store', store, '--http', 'localhost', '--user', 'a'], /--http: "localhost" is not host:port/],
      [['--user', 'alice'], /--store is required/],
    ];
    for (const [args, message] of cases) {
      const result = await kiokuInProcess(['mcp', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
  });
});

describe('kioku help mcp', () => {
  it('documents both transports, the toolsets and the tokens file', async () => {
    const help = await kiokuInProcess(['help', 'mcp']);
    expect(help.code).toBe(0);
    for (const text of [
      '--http <host:port>',
      '--tokens <file>',
      'details  store_memory',
      '"sha256"',
      '--max-output',
    ]) {
      expect(help.stdout).toContain(text);
    }
    expect((await kiokuInProcess(['--help'])).stdout).toContain(
      'kioku mcp     --store <backend> --user <id>',
    );
  });
});

describe('kioku mcp token', () => {
  it('prints a strong token and an entry that names its user by hash', async () => {
    const result = await kioku(['mcp', 'token', '--user', 'alice', '--agent', 'cursor']);
    expect(result.code).toBe(0);
    const [, token, entry] = /^.*\n {2}(\S+)\n.*\n {2}(\{.*\})\n$/.exec(result.stdout)!;
    const parsed = JSON.parse(entry!) as { user: string; agent: string; sha256: string };
    expect(parsed).toMatchObject({ user: 'alice', agent: 'cursor' });
    const { createHash } = await import('node:crypto');
    expect(parsed.sha256).toBe(createHash('sha256').update(token!).digest('hex'));
  });
});
