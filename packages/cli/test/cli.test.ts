import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ManualClock } from '@kioku/core/testing';
import { createJsonStores } from '@kioku/store-json';
import { STRANGE_BUT_VALID } from '@kioku/store-test-suite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Bundle, KINDS } from '../src/index.js';
import {
  type CliResult,
  canonical,
  fillAllKinds,
  kioku,
  pgBackend,
  pgUrl,
  redisBackend,
  redisUrl,
  tempDir,
} from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

/** Fill a JSON directory on a clock near the real time, so the child processes' system clock sees live TTLs. */
async function jsonSource(name = 'json'): Promise<string> {
  const clock = new ManualClock(Date.now() - 120_000);
  await fillAllKinds(createJsonStores({ directory: path.join(dir, name), clock }), clock);
  return `json:${path.join(dir, name)}`;
}

function ok(result: CliResult): CliResult {
  expect(result.stderr.includes('    at '), result.stderr).toBe(false);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

function bundleOf(text: string): Bundle {
  return JSON.parse(text) as Bundle;
}

function expectSameBundles(actual: Bundle, expected: Bundle): void {
  expect(Object.keys(actual.stores)).toEqual(Object.keys(expected.stores));
  for (const kind of KINDS) {
    if (expected.stores[kind] === undefined) continue;
    expect(canonical(actual.stores[kind]), kind).toStrictEqual(canonical(expected.stores[kind]));
  }
}

const COUNTS = { facts: 9, documents: 4, plans: 3, working: 7, sessions: 4, details: 6 };

function expectCounts(output: string): void {
  for (const [kind, n] of Object.entries(COUNTS))
    expect(output).toMatch(new RegExp(`^  ${kind} +${n} records$`, 'm'));
}

describe('kioku --help', () => {
  it('prints usage with examples, per-command help and the version', async () => {
    const [main, migrate, version] = await Promise.all([
      kioku(['--help']),
      kioku(['migrate', '--help']),
      kioku(['--version']),
    ]);
    expect(ok(main).stdout).toContain('kioku migrate --from json:./data --to sqlite:./kioku.db --all-users');
    expect(main.stdout).toMatch(/Examples:/);
    expect(main.stdout).toContain('postgres://');
    expect(ok(migrate).stdout).toContain('--dry-run');
    expect(ok(version).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('kioku migrate', () => {
  it('copies JSON → SQLite, printing per-kind counts; a dry run writes nothing', async () => {
    const from = await jsonSource();
    const db = path.join(dir, 'kioku.db');
    const dry = ok(
      await kioku(['migrate', '--from', from, '--to', `sqlite:${db}`, '--all-users', '--dry-run']),
    );
    expectCounts(dry.stdout);
    expect(dry.stdout).toContain('nothing was written');
    await expect(access(db)).rejects.toThrow();

    const result = ok(await kioku(['migrate', '--from', from, '--to', `sqlite:${db}`, '--all-users']));
    expect(result.stdout).toContain(`Copying all users from ${from} to sqlite:${db}`);
    expectCounts(result.stdout);
    expect(result.stdout).toContain('Copied 33 records.');

    const [a, b] = await Promise.all([
      kioku(['export', '--from', from, '--all-users']),
      kioku(['export', '--from', `sqlite:${db}`, '--all-users']),
    ]);
    expectSameBundles(bundleOf(ok(b).stdout), bundleOf(ok(a).stdout));
  });

  it('copies one user, and only the kinds asked for', async () => {
    const from = await jsonSource();
    const db = path.join(dir, 'alice.db');
    const result = ok(
      await kioku([
        'migrate',
        '--from',
        from,
        '--to',
        `sqlite:${db}`,
        '--user',
        'alice',
        '--kinds',
        'sessions,facts',
      ]),
    );
    expect(result.stdout).toMatch(/^ {2}facts +6 records$/m);
    expect(result.stdout).toMatch(/^ {2}sessions +3 records$/m);
    expect(result.stdout).not.toContain('documents');
    const exported = bundleOf(ok(await kioku(['export', '--from', `sqlite:${db}`, '--all-users'])).stdout);
    expect(exported.stores.facts?.records).toHaveLength(6);
    expect(exported.stores.documents?.records).toHaveLength(0);
    expect(JSON.stringify(exported)).not.toContain('"bob"');
  });

  it.skipIf(pgUrl === '')('copies JSON → SQLite → PostgreSQL with equal exports at every step', async () => {
    const from = await jsonSource();
    const sqlite = `sqlite:${path.join(dir, 'kioku.db')}`;
    const pg = pgBackend();
    expectCounts(ok(await kioku(['migrate', '--from', from, '--to', sqlite, '--all-users'])).stdout);
    const toPg = ok(await kioku(['migrate', '--from', sqlite, '--to', pg, '--all-users']));
    expectCounts(toPg.stdout);
    // Running it again replaces the same partitions: same counts, same data.
    expectCounts(ok(await kioku(['migrate', '--from', sqlite, '--to', pg, '--all-users'])).stdout);

    const [a, b, c] = await Promise.all([
      kioku(['export', '--from', from, '--all-users']),
      kioku(['export', '--from', sqlite, '--all-users']),
      kioku(['export', '--from', pg, '--all-users']),
    ]);
    const source = bundleOf(ok(a).stdout);
    expectSameBundles(bundleOf(ok(b).stdout), source);
    expectSameBundles(bundleOf(ok(c).stdout), source);
    expect(c.stderr).toContain('Exported 33 records of all users');
  });

  it.skipIf(pgUrl === '')('copies strange but valid text JSON → PostgreSQL unchanged', async () => {
    const strange = STRANGE_BUT_VALID;
    const stores = createJsonStores({ directory: path.join(dir, 'strange') });
    const alice = { userId: 'alice' };
    await stores.facts.create(alice, { content: strange, title: strange, tags: ['記憶 😀'] });
    await stores.documents.create(alice, { title: strange, text: strange });
    await stores.working.set(alice, 'session/s1/note', strange);
    await stores.details.create(alice, { description: strange, content: strange });
    const from = `json:${path.join(dir, 'strange')}`;
    const pg = pgBackend();
    ok(await kioku(['migrate', '--from', from, '--to', pg, '--user', 'alice']));
    const [a, b] = await Promise.all([
      kioku(['export', '--from', from, '--user', 'alice']),
      kioku(['export', '--from', pg, '--user', 'alice']),
    ]);
    expectSameBundles(bundleOf(ok(b).stdout), bundleOf(ok(a).stdout));
    expect(ok(b).stdout).toContain(JSON.stringify(strange).slice(1, -1));
  });

  it.skipIf(redisUrl === '')('copies JSON → Redis → JSON', async () => {
    const from = await jsonSource();
    const redis = redisBackend();
    expectCounts(ok(await kioku(['migrate', '--from', from, '--to', redis, '--all-users'])).stdout);
    const back = `json:${path.join(dir, 'back')}`;
    expectCounts(ok(await kioku(['migrate', '--from', redis, '--to', back, '--all-users'])).stdout);
    const [a, b] = await Promise.all([
      kioku(['export', '--from', from, '--all-users']),
      kioku(['export', '--from', back, '--all-users']),
    ]);
    expectSameBundles(bundleOf(ok(b).stdout), bundleOf(ok(a).stdout));
  });
});

describe('kioku export / import', () => {
  it('round-trips a bundle through stdout and stdin, and through files', async () => {
    const from = await jsonSource();
    const exported = ok(await kioku(['export', '--from', from, '--all-users']));
    const bundle = bundleOf(exported.stdout);
    expect(bundle).toMatchObject({ format: 'kioku.bundle', schemaVersion: 1 });
    expect(Object.keys(bundle.stores)).toEqual([...KINDS]);
    expect(exported.stderr).toContain('Exported 33 records of all users');

    const db = `sqlite:${path.join(dir, 'imported.db')}`;
    const imported = ok(await kioku(['import', '--to', db], { input: exported.stdout }));
    expectCounts(imported.stdout);
    expect(imported.stdout).toContain('Imported 33 records.');
    const again = ok(
      await kioku(['export', '--from', db, '--all-users', '--output', path.join(dir, 'b.json')]),
    );
    expect(again.stdout).toBe('');
    expectSameBundles(bundleOf(await readFile(path.join(dir, 'b.json'), 'utf8')), bundle);

    const json = `json:${path.join(dir, 'from-file')}`;
    expectCounts(ok(await kioku(['import', '--to', json, '--input', path.join(dir, 'b.json')])).stdout);
    const third = ok(await kioku(['export', '--from', json, '--all-users']));
    expectSameBundles(bundleOf(third.stdout), bundle);
  });

  it("exports one user's memory and imports it only for that user", async () => {
    const from = await jsonSource();
    const alice = ok(await kioku(['export', '--from', from, '--user', 'alice']));
    expect(JSON.stringify(bundleOf(alice.stdout))).not.toContain('"bob"');
    const db = `sqlite:${path.join(dir, 'a.db')}`;
    ok(await kioku(['import', '--to', db, '--user', 'alice'], { input: alice.stdout }));

    const everyone = ok(await kioku(['export', '--from', from, '--all-users']));
    const refused = await kioku(['import', '--to', db, '--user', 'alice'], { input: everyone.stdout });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SCOPE');
    expect(refused.stderr).toContain('"bob"');
    const after = bundleOf(ok(await kioku(['export', '--from', db, '--all-users'])).stdout);
    expect(JSON.stringify(after)).not.toContain('"bob"');
  });

  it('refuses an unknown version or a malformed bundle with a clear error and writes nothing', async () => {
    const from = await jsonSource();
    const bundle = bundleOf(ok(await kioku(['export', '--from', from, '--all-users'])).stdout);
    const db = path.join(dir, 'never.db');

    const future = await kioku(['import', '--to', `sqlite:${db}`], {
      input: JSON.stringify({ ...bundle, schemaVersion: 2 }),
    });
    expect(future.code).toBe(1);
    expect(future.stderr).toContain('kioku: UNSUPPORTED: Bundle schemaVersion 2 is not supported');

    // Facts are fine, the last kind is broken: the facts must not be written either.
    const broken = structuredClone(bundle);
    (broken.stores.details?.records[0] as { content: unknown }).content = 42;
    const bad = await kioku(['import', '--to', `sqlite:${db}`], { input: JSON.stringify(broken) });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/kioku: VALIDATION: Invalid details snapshot: records\.0\.content/);

    const notJson = await kioku(['import', '--to', `sqlite:${db}`], { input: '{"format": "kioku.bundle", ' });
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('VALIDATION: The input is not JSON');

    const other = await kioku(['import', '--to', `sqlite:${db}`], { input: '{"hello": "world"}' });
    expect(other.stderr).toContain('This is not a Kioku bundle');

    for (const r of [future, bad, notJson, other]) expect(r.stderr).not.toContain('    at ');
    await expect(access(db)).rejects.toThrow();
  });

  it('imports a single store snapshot as well', async () => {
    const from = await jsonSource();
    const bundle = bundleOf(
      ok(await kioku(['export', '--from', from, '--all-users', '--kinds', 'plans'])).stdout,
    );
    expect(Object.keys(bundle.stores)).toEqual(['plans']);
    const file = path.join(dir, 'plans.json');
    await writeFile(file, JSON.stringify(bundle.stores.plans));
    const result = ok(await kioku(['import', '--to', `json:${path.join(dir, 'p')}`, '-i', file]));
    expect(result.stdout).toMatch(/^ {2}plans +3 records$/m);
  });
});

describe('errors', () => {
  it('bad arguments exit with 2 and a helpful message from the real process', async () => {
    const results = await Promise.all([
      kioku([]),
      kioku(['migrate', '--from', 'json:./a', '--to', 'sqlite:./b.db']),
      kioku(['export', '--from', 'json:./a', '--all-users', '--frm', 'x']),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(results[0]!.stderr).toContain('Usage:');
    expect(results[1]!.stderr).toBe(
      'kioku: Say whose memory to copy: --user <id> for one user, or --all-users for every user.\nRun "kioku --help" for usage.\n',
    );
    expect(results[2]!.stderr).toContain('Unknown option --frm for "kioku export"');
  });

  it('a missing source or an unreachable server exits with 1 and the Kioku error code', async () => {
    const [missing, down] = await Promise.all([
      kioku([
        'migrate',
        '--from',
        `json:${path.join(dir, 'nope')}`,
        '--to',
        `sqlite:${path.join(dir, 'a.db')}`,
        '--all-users',
      ]),
      kioku(['export', '--from', 'postgres://kioku:secret@127.0.0.1:1/nowhere', '--user', 'alice']),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`kioku: NOT_FOUND: No JSON data directory at ${path.join(dir, 'nope')}`);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/kioku: STORAGE: /);
    expect(down.stderr).toContain('while reading from postgres://kioku:***@127.0.0.1:1/nowhere');
    expect(down.stderr).not.toContain('secret');
    for (const r of [missing, down]) expect(r.stderr).not.toContain('    at ');
  });
});

describe('messages that say what failed and what to do', () => {
  it('import --input of a missing file names the file, exit 2, no stack', async () => {
    const missing = path.join(dir, 'nosuch.json');
    const result = await kioku(['import', '--to', `json:${path.join(dir, 'out')}`, '--input', missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`kioku: Cannot read --input ${missing}: no such file.`);
    expect(result.stderr).not.toContain('ENOENT');
  });

  it('--from sqlite: of a file that is not a database says so, not "call setup()"', async () => {
    const notDb = path.join(dir, 'file.json');
    await writeFile(notDb, '{"facts": []}\n');
    const result = await kioku(['export', '--from', `sqlite:${notDb}`, '--user', 'alice']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`kioku: STORAGE: ${notDb} is not a SQLite database`);
    expect(result.stderr).not.toMatch(/setup\(\)/);
  });

  it('migrate --user that matches nothing warns, writes nothing and exits 1', async () => {
    const source = await jsonSource();
    const target = path.join(dir, 'target.db');
    const result = await kioku(['migrate', '--from', source, '--to', `sqlite:${target}`, '--user', 'alcie']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`kioku: No records of user "alcie" in ${source}; nothing was copied.`);
    await expect(access(target)).rejects.toThrow();
  });

  it('a long copy prints progress with records per second on stderr at least every 2 s', async () => {
    const source = await jsonSource();
    const result = await kioku(
      ['migrate', '--from', source, '--to', `json:${path.join(dir, 'copy')}`, '--all-users'],
      { env: { KIOKU_PROGRESS_MS: '0' } },
    );
    ok(result);
    expect(result.stderr).toMatch(/^ {2}\S+: \d[\d,]* of \d[\d,]* records \(\d[\d,]* records\/s\)$/m);
  });
});
