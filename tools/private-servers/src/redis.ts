import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { stopAtExit } from './exit-guard.js';
import { freePort } from './ports.js';

/** How long a start may take before it is called hung (an AOF replay on a busy machine can take seconds). */
const START_LIMIT_MS = 120_000;

export interface PrivateRedisOptions {
  /** The port (default: a free one, never 6379). */
  port?: number;
  /** When the append-only file is fsynced: on every write (default, nothing acknowledged is lost) or once a second. */
  appendfsync?: 'always' | 'everysec';
}

/**
 * A redis-server of its own for fault tests and benches: its own port on 127.0.0.1 and data folder,
 * append-only file on (`--appendonly yes`), no RDB snapshots. `stop()` kills it or shuts it down, `start()`
 * starts it again on the same port and folder (so it reloads the AOF), `restart()` does both as an operator
 * would (SHUTDOWN, then start). A last-resort kill runs at process exit.
 */
export class PrivateRedis {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'kioku-redis-'));
  readonly port: number;
  readonly appendfsync: 'always' | 'everysec';
  #process: ChildProcess | undefined;
  #log = '';
  readonly #unguard = stopAtExit(() => {
    this.#process?.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  });

  private constructor(port: number, options: PrivateRedisOptions) {
    this.port = port;
    this.appendfsync = options.appendfsync ?? 'always';
  }

  /** A new server, started. */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const server = new PrivateRedis(options.port ?? (await freePort()), options);
    try {
      await server.start();
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The server's process id, while it runs. */
  get pid(): number | undefined {
    const child = this.#process;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Start the (stopped) server and wait until it answers PING (after replaying its AOF). */
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
        this.appendfsync,
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
    child.on('error', (error) => (this.#log += `\n${error.message}`));
    this.#process = child;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    const deadline = Date.now() + START_LIMIT_MS;
    try {
      for (;;) {
        try {
          await probe.connect();
          // The server answers LOADING while it replays the AOF.
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
        }
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          throw new Error(`redis-server on port ${this.port} did not start:\n${this.#log}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      probe.disconnect();
    }
  }

  /** `kill`: SIGKILL (a crash: nothing is flushed that was not already); `shutdown`: SHUTDOWN NOSAVE. */
  async stop(how: 'kill' | 'shutdown'): Promise<void> {
    const child = this.#process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
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

  /** SHUTDOWN, then start again on the same folder: what an operator's restart does. */
  async restart(): Promise<void> {
    await this.stop('shutdown');
    await this.start();
  }

  /** Kill the server and remove its folder. Safe to repeat. */
  async destroy(): Promise<void> {
    await this.stop('kill');
    rmSync(this.dir, { recursive: true, force: true });
    this.#unguard();
  }
}
