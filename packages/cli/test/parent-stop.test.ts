import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The parent pid of every process (Linux /proc). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      out.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

function descendants(pid: number): number[] {
  const tree = parents();
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of tree) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('pnpm kioku studio', () => {
  it.skipIf(process.platform !== 'linux')(
    'stops when pnpm gets SIGTERM (pnpm does not forward it): no process is left',
    async () => {
      const { dir, cleanup } = await tempDir();
      cleanups.push(cleanup);
      const pnpm = spawn(
        'pnpm',
        [
          '--silent',
          'kioku',
          'studio',
          '--store',
          `sqlite:${path.join(dir, 'kioku.db')}`,
          '--port',
          '0',
          '--create',
        ],
        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const started = new Promise<void>((resolve, reject) => {
        let out = '';
        pnpm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('Kioku Studio: http')) resolve();
        });
        pnpm.on('exit', (code) => reject(new Error(`pnpm kioku studio exited (${code}) before serving`)));
      });
      await started;
      const server = descendants(pnpm.pid!);
      expect(server.length).toBeGreaterThan(0);
      cleanups.push(async () => {
        for (const pid of server) if (alive(pid)) process.kill(pid, 'SIGKILL');
      });

      const exited = new Promise((resolve) => pnpm.once('exit', resolve));
      pnpm.kill('SIGTERM');
      await exited;
      // The server notices its parent is gone (its parent pid changes) and shuts down: wait for it.
      while (server.some(alive)) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.filter(alive)).toEqual([]);
    },
  );
});
