import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canStartPostgres, PrivatePostgres } from '@kioku/private-servers';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

/** initdb must be installed (Debian: postgresql-15); under CI a missing one fails the run instead of skipping it. */
function hasPostgresServer(): boolean {
  if (canStartPostgres()) return true;
  if (process.env.CI && !['0', 'false'].includes(process.env.CI.toLowerCase())) {
    throw new Error(
      'initdb was not found (pg_config --bindir): CI is set, so the restart tests fail instead of skipping.',
    );
  }
  console.warn('\n[store-postgres] initdb is not installed: skipping the restart tests.\n');
  return false;
}

/** A child process and the lines it printed so far; `next(word)` resolves at the first line starting with it. */
function runChild(args: string[]) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--conditions=@kioku/source',
      '--import',
      'tsx',
      path.join(here, 'fixtures', 'restart-child.ts'),
      ...args,
    ],
    { cwd: path.resolve(here, '..'), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let stderr = '';
  const waiters: Array<() => void> = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    lines.push(...text.split('\n').filter(Boolean));
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  void exited.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  return {
    child,
    lines,
    exited,
    output: () => `stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`,
    /** The first line starting with one of `words`, or undefined once the child has exited without one. */
    async next(...words: string[]): Promise<string | undefined> {
      for (;;) {
        const line = lines.find((l) => words.some((w) => l.startsWith(w)));
        if (line || child.exitCode !== null || child.signalCode !== null) return line;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    send: (command: string) => child.stdin!.write(`${command}\n`),
  };
}

// A cluster of the test's own (initdb in a temp folder, its own port): restarting the shared server would
// break every other test run on it.
describe.skipIf(!hasPostgresServer())('PostgreSQL restarts (a private cluster)', () => {
  let server: PrivatePostgres;
  beforeAll(async () => {
    server = await PrivatePostgres.start();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  // With postgres.js 3.4.9 the child died every time: the driver wrote the ROLLBACK of a transaction whose
  // connection the server closed on a socket it had already dropped, from a setImmediate, so `TypeError:
  // Cannot read properties of null (reading 'write')` at `nextWrite` escaped every promise
  // (porsager/postgres#1154, #1208; issue 40). postgres.js 4 rejects the call instead.
  it('a restart while a store call is in flight: the process survives and the next call succeeds', async () => {
    const applicationName = 'kioku-restart-child';
    const thaw = path.join(mkdtempSync(path.join(tmpdir(), 'kioku-restart-')), 'thaw');
    const app = runChild([server.url(), applicationName]);
    const admin = postgres(server.url(), { max: 2, onnotice: () => {} });
    try {
      expect(await app.next('ready'), app.output()).toBe('ready');
      // A store call in flight when the server goes: the test holds the sessions table, so the child's
      // next write (a transaction whose first statement updates the session row) waits inside PostgreSQL;
      // then the child's event loop is frozen and the server restarted under it. One table in one lock:
      // taking several could deadlock with a child transaction already holding one of them.
      const locker = await admin.reserve();
      await locker`begin`;
      await locker`lock table kioku.sessions in access exclusive mode`;
      for (;;) {
        const [waiting] = await admin<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where application_name = ${applicationName} and wait_event_type = 'Lock'`;
        if (waiting!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      app.send(`freeze ${thaw}`);
      expect(await app.next('frozen'), app.output()).toBe('frozen');
      await server.restart();
      writeFileSync(thaw, '');

      expect(await app.next('recovered'), `the child died:\n${app.output()}`).toBe('recovered');
      app.send('stop');
      expect(await app.exited, app.output()).toBe(0);
    } finally {
      app.child.kill('SIGKILL');
      await admin.end({ timeout: 1 });
      rmSync(path.dirname(thaw), { recursive: true, force: true });
    }
  });
});
