import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

/** A port nobody listens on right now (never 6379: that is the shared server). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port !== 6379 && port !== 0) return port;
  }
}

/**
 * A private redis-server for fault tests: its own port and data directory, append-only file fsynced on
 * every write (`--appendonly yes --appendfsync always`), no RDB snapshots. `stop()` kills or shuts it
 * down, `start()` starts it again on the same port and directory (so it reloads the AOF).
 */
export class PrivateRedis {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'kioku-redis-fault-'));
  #process: ChildProcess | undefined;
  #log = '';

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk) => (this.#log += String(chunk)));
    child.stderr?.on('data', (chunk) => (this.#log += String(chunk)));
    this.#process = child;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    // A hang detector only (an AOF replay on a busy machine can take seconds): far above any start seen.
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        await probe.connect();
        // The server answers LOADING while it replays the AOF.
        if ((await probe.ping()) === 'PONG') break;
      } catch {
        probe.disconnect();
      }
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`redis-server on port ${this.port} did not start:\n${this.#log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    probe.disconnect();
  }

  /** `kill`: SIGKILL (a crash: nothing is flushed that was not already); `shutdown`: SHUTDOWN NOSAVE. */
  async stop(how: 'kill' | 'shutdown'): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (how === 'kill') child.kill('SIGKILL');
    else {
      const admin = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      admin.on('error', () => {});
      await admin.shutdown('NOSAVE').catch(() => {});
      admin.disconnect();
    }
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop('kill');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
