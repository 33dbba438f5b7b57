import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stopAtExit } from './exit-guard.js';
import { freePort } from './ports.js';
import { giveToServerAccount, serverAccount } from './run-as.js';

/** How long a start may take before it is called hung. */
const START_LIMIT_MS = 60_000;

/** Whether a private PgBouncer can be started here (Debian: `apt-get install pgbouncer`). */
export function canStartPgBouncer(): boolean {
  try {
    execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface PrivatePgBouncerOptions {
  /** The PostgreSQL server it pools (its port on 127.0.0.1). */
  serverPort: number;
  /** `transaction` (default: how teams run many app instances on one PostgreSQL) or `session`. */
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user (default 20). */
  poolSize?: number;
  /** Client connections accepted (default 2000). */
  maxClientConnections?: number;
  /** Users it lets in (trust authentication: no password), besides `postgres`. */
  users?: readonly string[];
  /**
   * Seconds it refuses clients after a failed login to the server (`server_login_retry`, PgBouncer's
   * default 15): a server restart keeps every client out at least this long.
   */
  serverLoginRetry?: number;
}

/**
 * A PgBouncer of its own in front of a private PostgreSQL: every database of the server, trust
 * authentication, its own port on 127.0.0.1 (never 6432), its ini, log and pid files in a temporary folder.
 * PgBouncer refuses to run as root; under root it runs as the `postgres` account (`-u`). The admin console
 * is database `pgbouncer` as user `postgres` (simple queries only: `SHOW POOLS`).
 */
export class PrivatePgBouncer {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'kioku-pgbouncer-'));
  readonly port: number;
  readonly #child: ChildProcess;
  #log = '';
  readonly #unguard: () => void;

  private constructor(port: number, options: PrivatePgBouncerOptions) {
    this.port = port;
    giveToServerAccount(this.dir);
    const users = ['postgres', ...(options.users ?? [])];
    const file = (name: string, text: string) => {
      const at = path.join(this.dir, name);
      writeFileSync(at, text);
      giveToServerAccount(at);
      return at;
    };
    const userlist = file('userlist.txt', users.map((u) => `"${u}" ""\n`).join(''));
    const ini = file(
      'pgbouncer.ini',
      [
        '[databases]',
        `* = host=127.0.0.1 port=${options.serverPort}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${userlist}`,
        `pool_mode = ${options.poolMode ?? 'transaction'}`,
        `default_pool_size = ${options.poolSize ?? 20}`,
        `max_client_conn = ${options.maxClientConnections ?? 2000}`,
        ...(options.serverLoginRetry !== undefined
          ? [`server_login_retry = ${options.serverLoginRetry}`]
          : []),
        'admin_users = postgres',
        'stats_users = postgres',
        // Startup parameters drivers send that PgBouncer does not track (postgres.js, JDBC, psycopg).
        'ignore_startup_parameters = extra_float_digits,search_path,options',
        `logfile = ${path.join(this.dir, 'pgbouncer.log')}`,
        `pidfile = ${path.join(this.dir, 'pgbouncer.pid')}`,
        '',
      ].join('\n'),
    );
    const account = serverAccount();
    this.#child = spawn('pgbouncer', [...(account ? ['-u', 'postgres'] : []), ini], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child.stdout?.on('data', (chunk) => (this.#log += String(chunk)));
    this.#child.stderr?.on('data', (chunk) => (this.#log += String(chunk)));
    this.#child.on('error', (error) => (this.#log += `\n${error.message}`));
    this.#unguard = stopAtExit(() => {
      this.#child.kill('SIGKILL');
      rmSync(this.dir, { recursive: true, force: true });
    });
  }

  /** Start a PgBouncer in front of `serverPort` and wait until it accepts connections. */
  static async start(options: PrivatePgBouncerOptions): Promise<PrivatePgBouncer> {
    const bouncer = new PrivatePgBouncer(await freePort(), options);
    try {
      await bouncer.#listening();
    } catch (error) {
      await bouncer.destroy();
      throw error;
    }
    return bouncer;
  }

  /** A URL for `database` as `user` through the pooler. */
  url(database = 'postgres', user = 'postgres'): string {
    return `postgres://${user}@127.0.0.1:${this.port}/${database}`;
  }

  /** The pooler's process id, while it runs. */
  get pid(): number | undefined {
    const child = this.#child;
    return child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Stop the pooler (SIGTERM: at once) and remove its folder. Safe to repeat. */
  async destroy(): Promise<void> {
    const child = this.#child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.#unguard();
  }

  async #listening(): Promise<void> {
    const deadline = Date.now() + START_LIMIT_MS;
    for (;;) {
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(this.port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (open) return;
      if (this.#child.exitCode !== null || this.#child.signalCode !== null || Date.now() > deadline) {
        throw new Error(`pgbouncer on port ${this.port} did not start:\n${this.#log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
