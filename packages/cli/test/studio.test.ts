import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createSqliteStores } from '@kioku/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { kiokuArgv, kiokuInProcess, packageDir, tempDir } from './helpers.js';

/** `kioku studio …` as a child process; resolves with the address it prints (with the access token). */
function studio(args: string[]) {
  const child = spawn(process.execPath, kiokuArgv(['studio', '--port', '0', ...args]), {
    cwd: packageDir,
    env: { ...process.env, KIOKU_DEBUG: '' },
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const found = /Kioku Studio: (\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    void exited.then((code) => reject(new Error(`kioku studio exited with ${code}: ${err}`)));
  });
  return { url, stop };
}

describe('kioku studio', () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('serves the store on 127.0.0.1 behind the access token it prints, until SIGTERM', async () => {
    const { dir, cleanup } = await tempDir();
    stops.push(cleanup);
    const run = studio(['--store', `sqlite:${path.join(dir, 'kioku.db')}`, '--create']);
    stops.unshift(run.stop);
    const url = new URL(await run.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await fetch(`${url.origin}${url.pathname}`)).status).toBe(401);
    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const users = await fetch(`${url.origin}${url.pathname}`, { headers: { cookie } });
    expect(users.status).toBe(200);
    expect(await users.text()).toContain('<h1>Users</h1>');
    expect(await run.stop()).toBe(0);
  });

  it('with --read-only writes nothing: the database file stays byte-identical through start, pages and stop', async () => {
    const { dir, cleanup } = await tempDir();
    stops.push(cleanup);
    const file = path.join(dir, 'kioku.db');
    const seeded = createSqliteStores({ file });
    await seeded.setup();
    await seeded.facts.create({ userId: 'alice' }, { content: 'Likes green tea' });
    await seeded.close();
    const before = await readFile(file);
    const run = studio(['--store', `sqlite:${file}`, '--read-only']);
    stops.unshift(run.stop);
    const url = new URL(await run.url);
    const opened = await fetch(url, { redirect: 'manual' });
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const facts = await fetch(`${url.origin}${url.pathname}users/alice/facts`, { headers: { cookie } });
    expect(await facts.text()).toContain('Likes green tea');
    expect(await run.stop()).toBe(0);
    expect((await readFile(file)).equals(before)).toBe(true);
  });

  it('never prints the password or a secret query parameter of the store URL', async () => {
    const result = await kiokuInProcess([
      'studio',
      '--store',
      'postgres://kioku:s3cret-pw@127.0.0.1:1/app?password=s3cret-q',
      '--read-only',
      '--port',
      '0',
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).not.toContain('s3cret');
  });

  it('refuses a non-loopback address without --allow-remote, before opening the store', async () => {
    const { dir, cleanup } = await tempDir();
    stops.push(cleanup);
    const file = path.join(dir, 'kioku.db');
    const remote = await kiokuInProcess([
      'studio',
      '--store',
      `sqlite:${file}`,
      '--host',
      '0.0.0.0',
      '--port',
      '0',
    ]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0.*--allow-remote/);
    expect(existsSync(file)).toBe(false);
    const missing = await kiokuInProcess(['studio']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--store is required/);
  });
});
