import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CorruptDataError, ValidationError } from '@kioku/core';
import { ManualClock } from '@kioku/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJsonStores, JsonFactStore, JsonWorkingMemoryStore } from '../src/index.js';
import { tempDataDir } from './helpers.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDataDir());
});
afterEach(async () => {
  await cleanup();
});

async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

describe('JSON store layout', () => {
  it('writes one readable file per partition under users/{user}[/agents/{agent}]', async () => {
    const stores = createJsonStores({ directory: dir });
    await stores.facts.create(
      { userId: 'u1' },
      { content: 'Prefers dark mode', category: 'user-preferences/ui' },
    );
    await stores.facts.create({ userId: 'u1', agentId: 'coder' }, { content: 'Uses pnpm' });
    await stores.plans.create({ userId: 'u1', threadId: 't1' }, { goal: 'Ship', steps: ['a'] });
    await stores.working.set({ userId: 'u1' }, 'session/s1/notes', 'draft');
    const session = await stores.sessions.create({ userId: 'u1' });
    await stores.sessions.kvSet({ userId: 'u1' }, session.id, 'topic', 'memory');
    await stores.details.create(
      { userId: 'u1' },
      { description: 'npm install log', content: 'added 200 packages' },
    );

    const files = (await listTree(dir)).filter((f) => !f.startsWith('.locks'));
    expect(files).toEqual(
      [
        'users/u1/agents/coder/facts.json',
        'users/u1/details.json',
        'users/u1/facts.json',
        'users/u1/plans/t1.json',
        `users/u1/sessions/${session.id}.json`,
        'users/u1/sessions/index.json',
        'users/u1/working/session.json',
      ].sort(),
    );
    const facts = JSON.parse(await readFile(path.join(dir, 'users/u1/facts.json'), 'utf8'));
    expect(facts).toMatchObject({
      kind: 'facts',
      schemaVersion: 2,
      records: [{ value: { content: 'Prefers dark mode' } }],
    });
    // Pretty-printed for people, and no temporary files left behind.
    expect(await readFile(path.join(dir, 'users/u1/facts.json'), 'utf8')).toContain('\n  "records": [');
    expect(files.some((f) => f.endsWith('.tmp'))).toBe(false);
  });

  it('keeps ids that differ only in case apart, even on case-insensitive file systems', async () => {
    const facts = new JsonFactStore({ directory: dir });
    await facts.create({ userId: 'Alice' }, { content: 'upper' });
    await facts.create({ userId: 'alice' }, { content: 'lower' });
    expect((await facts.list({ userId: 'Alice' })).map((f) => f.content)).toEqual(['upper']);
    expect((await facts.list({ userId: 'alice' })).map((f) => f.content)).toEqual(['lower']);
    expect(await listTree(path.join(dir, 'users'))).toEqual(['^alice/facts.json', 'alice/facts.json']);
    const snapshot = await facts.snapshot({ allUsers: true });
    expect(snapshot.records.map((f) => f.userId).sort()).toEqual(['Alice', 'alice']);
  });

  it('never creates files outside the data directory for hostile ids', async () => {
    const facts = new JsonFactStore({ directory: dir });
    for (const userId of ['../../etc/passwd', '..', '/abs', 'a/b', 'a\\b', '*', 'a:b', '.hidden']) {
      await expect(facts.create({ userId }, { content: 'x' })).rejects.toBeInstanceOf(ValidationError);
    }
    expect(await readdir(path.dirname(dir))).toContain(path.basename(dir));
    expect(await listTree(dir)).toEqual([]);
  });
});

describe('JSON store integrity', () => {
  it('reports a corrupted file by name and never overwrites it', async () => {
    const facts = new JsonFactStore({ directory: dir });
    await facts.create({ userId: 'u1' }, { content: 'kept' });
    const file = path.join(dir, 'users/u1/facts.json');
    const broken = '{ "kind": "facts", "records": [ {"id": ';
    await writeFile(file, broken);

    const fresh = new JsonFactStore({ directory: dir });
    const readError = await fresh.list({ userId: 'u1' }).catch((e: unknown) => e);
    expect(readError).toBeInstanceOf(CorruptDataError);
    expect((readError as CorruptDataError).details.file).toBe(file);
    expect((readError as Error).message).toContain(file);
    await expect(fresh.create({ userId: 'u1' }, { content: 'new' })).rejects.toBeInstanceOf(CorruptDataError);
    expect(await readFile(file, 'utf8')).toBe(broken);
    // Other users are unaffected.
    await fresh.create({ userId: 'u2' }, { content: 'fine' });
    expect(await fresh.list({ userId: 'u2' })).toHaveLength(1);
  });

  it('rejects a hand-edited record that breaks the schema, naming the file and the field', async () => {
    const facts = new JsonFactStore({ directory: dir });
    const fact = await facts.create({ userId: 'u1' }, { content: 'kept' });
    const file = path.join(dir, 'users/u1/facts.json');
    const data = JSON.parse(await readFile(file, 'utf8'));
    data.records[0].value.category = '../escape';
    await writeFile(file, JSON.stringify(data));
    const error = await new JsonFactStore({ directory: dir })
      .get({ userId: 'u1' }, fact.id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptDataError);
    expect((error as Error).message).toMatch(/records\[0\]\.category/);
  });

  it('reads files of format 1 and writes format 2 on the next change, one record per line', async () => {
    const ts = '2026-01-01T00:00:00.000Z';
    const fact = {
      id: 'old-1',
      userId: 'u1',
      content: 'Written by an older version',
      category: 'general',
      tags: [],
      metadata: {},
      provenance: { source: 'user' },
      createdAt: ts,
      updatedAt: ts,
      version: 1,
    };
    const file = path.join(dir, 'users/u1/facts.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ kind: 'facts', schemaVersion: 1, records: [fact] }, null, 2));
    const facts = new JsonFactStore({ directory: dir });
    expect(await facts.get({ userId: 'u1' }, 'old-1')).toMatchObject({
      content: 'Written by an older version',
    });
    await facts.create({ userId: 'u1' }, { id: 'new-1', content: 'Written now' });
    const text = await readFile(file, 'utf8');
    expect(JSON.parse(text)).toMatchObject({
      schemaVersion: 2,
      records: [{ key: 'old-1' }, { key: 'new-1' }],
    });
    expect(text.split('\n').filter((line) => line.trimStart().startsWith('{"key":'))).toHaveLength(2);
    expect((await new JsonFactStore({ directory: dir }).list({ userId: 'u1' })).map((f) => f.id)).toEqual([
      'old-1',
      'new-1',
    ]);
  });

  it('refuses a file of a newer format by name, saying what reads it, and leaves it alone', async () => {
    const file = path.join(dir, 'users/u1/facts.json');
    await mkdir(path.dirname(file), { recursive: true });
    const future = JSON.stringify({ kind: 'facts', schemaVersion: 9, records: [] });
    await writeFile(file, future);
    const error = await new JsonFactStore({ directory: dir }).list({ userId: 'u1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptDataError);
    expect((error as Error).message).toMatch(/schemaVersion 9.*newer @kioku\/store-json/);
    expect(await readFile(file, 'utf8')).toBe(future);
  });

  it('a session append adds one line to the session file', async () => {
    const stores = createJsonStores({ directory: dir });
    const session = await stores.sessions.create({ userId: 'u1' });
    await stores.sessions.transcriptAppend({ userId: 'u1' }, session.id, { role: 'user', content: 'one' });
    const file = path.join(dir, `users/u1/sessions/${session.id}.json`);
    const before = (await readFile(file, 'utf8')).split('\n');
    await stores.sessions.transcriptAppend({ userId: 'u1' }, session.id, { role: 'user', content: 'two' });
    const after = (await readFile(file, 'utf8')).split('\n');
    expect(after.length).toBe(before.length + 1);
    expect(after.find((line) => line.includes('"two"'))).toMatch(/^ {4}\{"key":"t:000000000001","value":/);
  });

  it('sees writes made through another instance (cache follows the file)', async () => {
    const a = new JsonFactStore({ directory: dir });
    const b = new JsonFactStore({ directory: dir });
    await a.create({ userId: 'u1' }, { content: 'from a' });
    expect((await b.list({ userId: 'u1' })).map((f) => f.content)).toEqual(['from a']);
    await b.create({ userId: 'u1' }, { content: 'from b' });
    expect((await a.search({ userId: 'u1' }, { query: 'from b' }))[0]?.fact.content).toBe('from b');
  });

  it('never returns expired working-memory entries after a reload and sweeps them from disk', async () => {
    const clock = new ManualClock();
    const working = new JsonWorkingMemoryStore({ directory: dir, clock });
    await working.set({ userId: 'u1' }, 'session/s1/short', 'soon gone', { ttlMs: 60_000 });
    await working.set({ userId: 'u1' }, 'session/s1/long', 'stays', { ttlMs: 3_600_000 });
    clock.advance(120_000);
    const reopened = new JsonWorkingMemoryStore({ directory: dir, clock });
    expect((await reopened.list({ userId: 'u1' })).map((e) => e.key)).toEqual(['session/s1/long']);
    expect(await reopened.sweep()).toBe(1);
    const file = JSON.parse(await readFile(path.join(dir, 'users/u1/working/session.json'), 'utf8'));
    expect(file.records.map((e: { key: string }) => e.key)).toEqual(['session/s1/long']);
  });

  it('deletes a partition file when it becomes empty', async () => {
    const facts = new JsonFactStore({ directory: dir });
    const fact = await facts.create({ userId: 'u1' }, { content: 'temporary' });
    await facts.delete({ userId: 'u1' }, fact.id);
    await expect(stat(path.join(dir, 'users/u1/facts.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('JSON store across processes', () => {
  it('loses nothing when two OS processes write to the same directory at once', async () => {
    const stores = createJsonStores({ directory: dir });
    const session = await stores.sessions.create({ userId: 'shared-user' });
    const writer = path.join(here, 'fixtures', 'writer.ts');
    const perProcess = 40;
    const spawnWriter = (label: string) =>
      run(
        process.execPath,
        ['--conditions=@kioku/source', '--import', 'tsx', writer, dir, label, String(perProcess), session.id],
        {
          cwd: path.resolve(here, '..'),
          timeout: 240_000, // below the 300 s test limit (vitest.shared.ts): a hung writer reports first
        },
      );
    const results = await Promise.all([spawnWriter('alpha'), spawnWriter('beta')]);
    expect(results.map((r) => r.stdout.trim())).toEqual(['done', 'done']);

    const scope = { userId: 'shared-user' };
    const facts = await stores.facts.list(scope);
    expect(facts).toHaveLength(2 * perProcess);
    expect(new Set(facts.map((f) => f.content)).size).toBe(2 * perProcess);
    const kv = await stores.sessions.kvList(scope, session.id);
    expect(kv).toHaveLength(2 * perProcess);
    const transcript = await stores.sessions.transcriptReadLast(scope, session.id, 1000);
    expect(transcript).toHaveLength(2 * perProcess);
    // Each process's own messages stay in the order it wrote them.
    for (const label of ['alpha', 'beta']) {
      const own = transcript
        .filter((t) => t.content.startsWith(label))
        .map((t) => Number(t.content.split(' ').pop()));
      expect(own).toHaveLength(perProcess);
    }
  });
});

describe('JSON store after a crash', () => {
  /** The pid of a process that has exited (a killed writer's, as far as this host can tell). */
  async function deadPid(): Promise<number> {
    const child = (await import('node:child_process')).spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.on('exit', resolve));
    return child.pid!;
  }

  it('removes the temp files of killed writers on open, and nothing a live writer may still rename', async () => {
    const { HOST_TAG } = await import('../src/leftovers.js');
    const { mkdir, utimes } = await import('node:fs/promises');
    const userDir = path.join(dir, 'users', 'alice');
    await mkdir(userDir, { recursive: true });
    const dead = await deadPid();
    const killed = path.join(userDir, `.facts.json.${HOST_TAG}-${dead}.0a1b2c3d.tmp`);
    const oldFormat = path.join(userDir, `.facts.json.${dead}.0a1b2c3d.tmp`);
    const live = path.join(userDir, `.facts.json.${HOST_TAG}-${process.pid}.0a1b2c3d.tmp`);
    const otherHostFresh = path.join(userDir, '.facts.json.ffffffff-4242.0a1b2c3d.tmp');
    for (const file of [killed, oldFormat, live, otherHostFresh]) await writeFile(file, '{"half": ');
    const hourAgo = new Date(Date.now() - 2 * 60 * 60_000);
    await utimes(oldFormat, hourAgo, hourAgo);

    const stores = createJsonStores({ directory: dir });
    expect(await stores.facts.list({ userId: 'alice' })).toEqual([]);
    expect((await readdir(userDir)).sort()).toEqual(
      [path.basename(live), path.basename(otherHostFresh)].sort(),
    );
  });

  /** The lock of alice's facts file as a process left it: the directory, and an owner file unless `pid` is undefined. */
  async function leftLock(pid: number | undefined): Promise<string> {
    const { mkdir } = await import('node:fs/promises');
    const os = await import('node:os');
    const lockDir = path.join(
      dir,
      '.locks',
      `${encodeURIComponent(path.join('users', 'alice', 'facts.json'))}.lock`,
    );
    await mkdir(lockDir, { recursive: true });
    if (pid !== undefined) await writeFile(`${lockDir}.owner`, JSON.stringify({ host: os.hostname(), pid }));
    return lockDir;
  }

  it('takes a lock whose holder died at once instead of waiting for it to go stale', async () => {
    await leftLock(await deadPid());
    // proper-lockfile would call this lock stale only after 10 s; the writer gives up after 5 s (taking a
    // dead holder's lock is a few file operations: far below that even on a busy machine).
    const stores = createJsonStores({ directory: dir, lockTimeoutMs: 5_000 });
    await stores.facts.create({ userId: 'alice' }, { content: 'written after the crash' });
    expect((await stores.facts.list({ userId: 'alice' })).map((f) => f.content)).toEqual([
      'written after the crash',
    ]);
  });

  it('after kill -9 mid-writes, the next process finds no temp file and writes without waiting', async () => {
    const stores = createJsonStores({ directory: dir });
    const session = await stores.sessions.create({ userId: 'shared-user' });
    for (let trial = 0; trial < 2; trial++) {
      const { spawn } = await import('node:child_process');
      const child = spawn(
        process.execPath,
        [
          '--conditions=@kioku/source',
          '--import',
          'tsx',
          path.join(here, 'fixtures', 'writer.ts'),
          dir,
          `t${trial}`,
          '100000',
          session.id,
        ],
        { cwd: path.resolve(here, '..') },
      );
      // Kill it once it has written something, in the middle of its writes (the bound only detects a hang:
      // starting tsx on a busy machine can take many seconds).
      for (let waited = 0; waited < 3_600; waited++) {
        const facts = await readFile(path.join(dir, 'users', 'shared-user', 'facts.json'), 'utf8').catch(
          () => '',
        );
        if (facts.includes(`t${trial} fact`)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('exit', resolve));
      // proper-lockfile alone would wait 10 s for the stale lock.
      const after = createJsonStores({ directory: dir, lockTimeoutMs: 5_000 });
      await after.facts.create({ userId: 'shared-user' }, { content: `after crash ${trial}` });
      await after.sessions.kvSet({ userId: 'shared-user' }, session.id, `after-${trial}`, 'x');
      expect((await listTree(dir)).filter((file) => file.endsWith('.tmp'))).toEqual([]);
    }
  });

  it('takes a lock with no owner once it is over a second old (its holder died before naming itself)', async () => {
    const { utimes } = await import('node:fs/promises');
    const lockDir = await leftLock(undefined);
    const twoSecondsAgo = new Date(Date.now() - 2_000);
    await utimes(lockDir, twoSecondsAgo, twoSecondsAgo);
    const stores = createJsonStores({ directory: dir, lockTimeoutMs: 5_000 }); // far above a few file operations
    await stores.facts.create({ userId: 'alice' }, { content: 'written' });
    expect(await stores.facts.count({ userId: 'alice' })).toBe(1);
  });

  it('takes a lock whose owner file was left empty (its holder was killed while writing it)', async () => {
    const { utimes } = await import('node:fs/promises');
    const lockDir = await leftLock(undefined);
    await writeFile(`${lockDir}.owner`, '');
    const twoSecondsAgo = new Date(Date.now() - 2_000);
    await utimes(lockDir, twoSecondsAgo, twoSecondsAgo);
    const stores = createJsonStores({ directory: dir, lockTimeoutMs: 5_000 }); // far above a few file operations
    await stores.facts.create({ userId: 'alice' }, { content: 'written' });
    expect(await stores.facts.count({ userId: 'alice' })).toBe(1);
  });

  it('leaves a lock held by a live process alone', async () => {
    await leftLock(process.ppid);
    const stores = createJsonStores({ directory: dir, lockTimeoutMs: 300 });
    await expect(stores.facts.create({ userId: 'alice' }, { content: 'x' })).rejects.toThrow(/Timed out/);
  });
});
