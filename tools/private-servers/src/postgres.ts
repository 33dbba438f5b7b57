import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stopAtExit } from './exit-guard.js';
import { freePort } from './ports.js';
import { asServerAccount, giveToServerAccount } from './run-as.js';

const run = promisify(execFile);

/** Seconds pg_ctl waits for a start or stop: a hang detector, far above the second or two they take. */
const PG_CTL_WAIT_SECONDS = '120';

/** Where `initdb`, `pg_ctl` and `postgres` are: `KIOKU_PG_BINDIR`, else `pg_config --bindir`. */
export function postgresBinDir(): string {
  const given = process.env.KIOKU_PG_BINDIR;
  if (given) return given;
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch (error) {
    throw new Error(
      `pg_config was not found (${(error as Error).message}): install PostgreSQL's server package (Debian: postgresql-15) or set KIOKU_PG_BINDIR to the folder that holds initdb and pg_ctl.`,
    );
  }
}

/** Whether a private PostgreSQL cluster can be started here (initdb is installed). */
export function canStartPostgres(): boolean {
  try {
    return existsSync(path.join(postgresBinDir(), 'initdb'));
  } catch {
    return false;
  }
}

export interface PrivatePostgresOptions {
  /**
   * Durability off for speed (`fsync`, `synchronous_commit`, `full_page_writes`): right for tests, whose
   * data dies with them; a bench that measures a server as deployed passes `false`. Default true.
   */
  fast?: boolean;
  /** Libraries loaded at server start (`shared_preload_libraries`), e.g. `pg_stat_statements`. */
  preload?: readonly string[];
  /** Any other postgresql.conf settings (`max_connections: 300`, …). */
  settings?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * A PostgreSQL cluster of its own: `initdb` in a temporary folder (trust authentication, user `postgres`),
 * listening on 127.0.0.1 on a free port (never 5432) and on a Unix socket in that folder. `restart()` is
 * `pg_ctl restart -m fast` (what an operator or a failover does to the clients: every connection is
 * terminated); `destroy()` stops it and removes the folder. A last-resort stop runs at process exit.
 */
export class PrivatePostgres {
  readonly dir: string;
  readonly data: string;
  readonly logFile: string;
  readonly #bin: string;
  readonly #unguard: () => void;

  private constructor(
    bin: string,
    dir: string,
    readonly port: number,
  ) {
    this.#bin = bin;
    this.dir = dir;
    this.data = path.join(dir, 'data');
    this.logFile = path.join(dir, 'server.log');
    this.#unguard = stopAtExit(() => {
      if (existsSync(path.join(this.data, 'postmaster.pid'))) {
        execFileSync(this.#tool('pg_ctl'), ['-D', this.data, '-m', 'immediate', 'stop'], {
          stdio: 'ignore',
          cwd: this.dir,
          ...asServerAccount(),
        });
      }
      rmSync(this.dir, { recursive: true, force: true });
    });
  }

  /** initdb, configure and start a new cluster (about 3 s). */
  static async start(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    const dir = mkdtempSync(path.join(tmpdir(), 'kioku-pg-'));
    giveToServerAccount(dir);
    const server = new PrivatePostgres(bin, dir, await freePort());
    try {
      await server.#pgTool('initdb', [
        '-D',
        server.data,
        '-U',
        'postgres',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ]);
      appendFileSync(path.join(server.data, 'postgresql.conf'), server.#config(options));
      await server.start();
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  /** A URL for `database` as `user` (trust authentication: no password). */
  url(database = 'postgres', user = 'postgres'): string {
    return `postgres://${user}@127.0.0.1:${this.port}/${database}`;
  }

  /** Start the (stopped) cluster and wait until it accepts connections. */
  async start(): Promise<void> {
    await this.#pgCtl(['-l', this.logFile, 'start']);
  }

  /** `pg_ctl restart -m fast`: every connection is terminated; resolves once the server accepts connections again. */
  async restart(): Promise<void> {
    await this.#pgCtl(['-l', this.logFile, '-m', 'fast', 'restart']);
  }

  /** Stop the cluster (`fast`: connections terminated, a clean shutdown; `immediate`: as a crash). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (this.pid() === undefined) return;
    await this.#pgCtl(['-m', mode, 'stop']);
  }

  /** The postmaster's process id, while the cluster runs. */
  pid(): number | undefined {
    try {
      const first = readFileSync(path.join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0];
      const pid = Number(first);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** The last `lines` of the server's log (for error messages). */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Stop the cluster at once and remove its folder. Safe to repeat. */
  async destroy(): Promise<void> {
    try {
      await this.stop('immediate');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
      this.#unguard();
    }
  }

  #config(options: PrivatePostgresOptions): string {
    const settings: Record<string, string | number | boolean> = {
      port: this.port,
      listen_addresses: '127.0.0.1',
      unix_socket_directories: this.dir,
      ...(options.fast === false ? {} : { fsync: false, synchronous_commit: false, full_page_writes: false }),
      ...(options.preload?.length ? { shared_preload_libraries: options.preload.join(',') } : {}),
      ...options.settings,
    };
    const value = (v: string | number | boolean) =>
      typeof v === 'string'
        ? `'${v.replaceAll("'", "''")}'`
        : typeof v === 'boolean'
          ? v
            ? 'on'
            : 'off'
          : v;
    return `\n# kioku private cluster\n${Object.entries(settings)
      .map(([k, v]) => `${k} = ${value(v)}`)
      .join('\n')}\n`;
  }

  #tool(name: string): string {
    return path.join(this.#bin, name);
  }

  #pgCtl(args: string[]): Promise<void> {
    return this.#pgTool('pg_ctl', ['-D', this.data, '-w', '-t', PG_CTL_WAIT_SECONDS, ...args]);
  }

  async #pgTool(name: string, args: string[]): Promise<void> {
    try {
      await run(this.#tool(name), args, { cwd: this.dir, ...asServerAccount() });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(
        `${name} ${args.at(-1)} failed for the private PostgreSQL in ${this.dir} (port ${this.port}): ${(stderr || stdout || (error as Error).message).trim()}\nserver log:\n${this.logTail()}`,
      );
    }
  }
}
