import { readdir } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliResult, kiokuInProcess, pgBackend, pgUrl, tempDir } from './helpers.js';

/*
 * Commands that read or erase refuse a store that does not exist: a typed error naming the path and what
 * to do, a non-zero exit, and nothing created (a mistyped path must never read as "no memory" nor as
 * "forgot 0 records, verified erased").
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function emptyDir(): Promise<string> {
  const { dir, cleanup } = await tempDir();
  cleanups.push(cleanup);
  return dir;
}

/** Commands that only read or erase, each with `--store <spec>` put in front. */
const READERS: [string, string[]][] = [
  ['forget', ['forget', '--user', 'x']],
  ['forget --dry-run', ['forget', '--user', 'x', '--dry-run']],
  ['forget --suppressed', ['forget', '--user', 'x', '--suppressed']],
  ['forget --fact', ['forget', '--user', 'x', '--fact', 'f1']],
  ['dream --list', ['dream', '--user', 'x', '--list']],
  ['dream --dry-run', ['dream', '--user', 'x', '--dry-run']],
  ['dream --apply', ['dream', '--user', 'x', '--apply', '01900000-0000-7000-8000-000000000000']],
  ['dream --revert', ['dream', '--user', 'x', '--revert', '01900000-0000-7000-8000-000000000000']],
  ['extract', ['extract', '--user', 'x', '--session', '01900000-0000-7000-8000-000000000000']],
  ['export', ['export', '--user', 'x']],
  ['studio --read-only', ['studio', '--read-only', '--port', '0']],
  ['worker --once', ['worker', '--once']],
];

/** Commands that serve (and write), refused the same way unless --create asks for a new store. */
const SERVERS: [string, string[]][] = [
  ['studio', ['studio', '--port', '0']],
  ['mcp (stdio)', ['mcp', '--user', 'alice']],
  ['mcp --http', ['mcp', '--http', '127.0.0.1:0', '--user', 'alice']],
];

function withStore(args: string[], store: string): string[] {
  const [command, ...rest] = args;
  return command === 'export' ? [command, '--from', store, ...rest] : [command!, '--store', store, ...rest];
}

async function run(args: string[]): Promise<CliResult> {
  // extract and dream load a model before writing; an endpoint is named so the store is what fails.
  const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
  process.env.OPENAI_API_KEY = 'sk-test';
  process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
  try {
    return await kiokuInProcess(args);
  } finally {
    for (const [name, value] of [
      ['OPENAI_API_KEY', saved.key],
      ['OPENAI_BASE_URL', saved.url],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('a store that does not exist', () => {
  for (const [name, args] of [...READERS, ...SERVERS]) {
    it(`${name}: sqlite:./typo.db is refused (NOT_FOUND naming the file) and no file is created`, async () => {
      const dir = await emptyDir();
      const file = path.join(dir, 'typo.db');
      const result = await run(withStore(args, `sqlite:${file}`));
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`NOT_FOUND: No SQLite database at ${file}`);
      expect(result.stderr).toMatch(/check the path/);
      expect(await readdir(dir)).toEqual([]);
    });

    it(`${name}: json:./typo-dir is refused and no directory is created`, async () => {
      const dir = await emptyDir();
      const data = path.join(dir, 'typo-dir');
      const result = await run(withStore(args, `json:${data}`));
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`NOT_FOUND: No JSON data directory at ${data}`);
      expect(await readdir(dir)).toEqual([]);
    });
  }

  it.skipIf(!pgUrl)(
    'forget on a PostgreSQL schema that does not exist is refused and creates no schema',
    async () => {
      const schema = `s_typo_${Date.now().toString(36)}`;
      const result = await run(['forget', '--store', pgBackend(schema), '--user', 'x']);
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`NOT_FOUND: No Kioku tables in PostgreSQL schema "${schema}"`);
      const sql = postgres(pgUrl, { max: 1, onnotice: () => {} });
      try {
        const rows = await sql`select 1 from information_schema.schemata where schema_name = ${schema}`;
        expect(rows.length).toBe(0);
      } finally {
        await sql.end();
      }
    },
  );

  for (const [name, args] of SERVERS) {
    it(`${name}: the refusal says how to start a new store (--create or kioku init)`, async () => {
      const dir = await emptyDir();
      const file = path.join(dir, 'kioku.dbb');
      const result = await run(withStore(args, `sqlite:${file}`));
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`No SQLite database at ${file}`);
      expect(result.stderr).toMatch(/pass --create to "kioku studio" \/ "kioku mcp"/);
      expect(result.stderr).toContain('kioku init --store <backend>');
      expect(await readdir(dir)).toEqual([]);
    });
  }

  it('studio refuses --read-only with --create, before opening anything', async () => {
    const dir = await emptyDir();
    const result = await run([
      'studio',
      '--store',
      `sqlite:${path.join(dir, 'k.db')}`,
      '--read-only',
      '--create',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--read-only writes nothing and --create writes a new store/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('kioku init creates an empty SQLite store, then says it is already there', async () => {
    const dir = await emptyDir();
    const file = path.join(dir, 'kioku.db');
    const first = await kiokuInProcess(['init', '--store', `sqlite:${file}`]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`Created an empty Kioku store at sqlite:${file}.\n`);
    expect(await readdir(dir)).toContain('kioku.db');
    const stats = await kiokuInProcess(['stats', '--store', `sqlite:${file}`, '--json']);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout).users).toBe(0);
    const again = await kiokuInProcess(['init', '--store', `sqlite:${file}`]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already holds a Kioku store/);
  });

  it('kioku init creates a JSON data directory that the next command opens', async () => {
    const dir = await emptyDir();
    const data = path.join(dir, 'data');
    const init = await kiokuInProcess(['init', '--store', `json:${data}`]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toBe(`Created an empty Kioku store at json:${data}.\n`);
    const users = await kiokuInProcess(['users', '--store', `json:${data}`, '--json']);
    expect(users.code, users.stderr).toBe(0);
  });

  it.skipIf(!pgUrl)(
    'mcp on a PostgreSQL schema without Kioku tables is refused and creates no schema',
    async () => {
      const schema = `s_typo_${Date.now().toString(36)}`;
      const result = await run(['mcp', '--store', pgBackend(schema), '--user', 'alice']);
      expect(result.code, result.stdout).toBe(1);
      expect(result.stderr).toContain(`NOT_FOUND: No Kioku tables in PostgreSQL schema "${schema}"`);
      const sql = postgres(pgUrl, { max: 1, onnotice: () => {} });
      try {
        const rows = await sql`select 1 from information_schema.schemata where schema_name = ${schema}`;
        expect(rows.length).toBe(0);
      } finally {
        await sql.end();
      }
    },
  );

  it('commands that write still create their store: import creates a SQLite file', async () => {
    const dir = await emptyDir();
    const file = path.join(dir, 'new.db');
    const bundle = JSON.stringify({ format: 'kioku.bundle', schemaVersion: 1, stores: {} });
    const result = await kiokuInProcess(['import', '--to', `sqlite:${file}`], bundle);
    expect(result.code, result.stderr).toBe(0);
    expect(await readdir(dir)).toContain('new.db');
  });
});
