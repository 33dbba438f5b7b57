import { createHash, randomBytes } from 'node:crypto';
import { isKiokuError, StorageError, ValidationError } from '@kioku/core';
import { checkUrlScheme, redactUrl } from '@kioku/core/adapter';
import { Redis, type RedisOptions } from 'ioredis';
import { KeySpace } from './keys.js';

export const DEFAULT_PREFIX = 'kioku:';

/**
 * The ioredis client you pass (`new Redis(...)`), as far as Kioku's published types say: a structural type,
 * because ioredis's own declarations do not compile under `skipLibCheck: false` (they import the untyped
 * `redis-errors`), and an app's types should not depend on them through Kioku's.
 */
export interface RedisClient {
  readonly options: { readonly keyPrefix?: string; readonly host?: string; readonly port?: number };
  quit(): Promise<unknown>;
}

/** ioredis's `RedisOptions` (see ioredis's documentation), typed loosely for the reason given at {@link RedisClient}. */
export type RedisClientOptions = Readonly<Record<string, unknown>>;

/** Kioku's defaults for a client it opens (see DEFAULT_REDIS_OPTIONS). */
export interface RedisDefaults {
  readonly maxRetriesPerRequest: number;
  readonly autoResendUnfulfilledCommands: boolean;
  readonly retryStrategy: (times: number) => number;
  readonly commandTimeout: number;
  readonly connectTimeout: number;
}

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`); Kioku opens the client and `close()` quits it. */
  url?: string;
  /** An ioredis client you created. Kioku never quits it; `close()` leaves it open. */
  client?: RedisClient;
  /** ioredis options for the client Kioku opens from `url` (merged over Kioku's defaults, see the README). */
  redisOptions?: RedisClientOptions;
  /** Prefix of every key Kioku writes (default `kioku:`). Snapshots and cleanup cover exactly this prefix. */
  prefix?: string;
}

/**
 * Defaults for a client Kioku opens:
 *
 * - `maxRetriesPerRequest: 0`: when the connection drops, commands in flight and commands issued while
 *   reconnecting are rejected (StorageError) at once or at the next failed reconnection attempt, instead
 *   of waiting in ioredis's offline queue. (With a higher value and `autoResendUnfulfilledCommands: false`,
 *   ioredis drops in-flight commands without settling them when it reconnects quickly.)
 * - `autoResendUnfulfilledCommands: false`: a write that was sent but not answered when the connection
 *   broke is reported as failed once (its outcome is unknown), never silently applied twice.
 * - `retryStrategy`: reconnect after 50, 100, … ms, at most every 500 ms, forever.
 * - `commandTimeout` / `connectTimeout` 10 s: a call's deadline, after which it fails with a retryable
 *   StorageError (a server that stopped answering, a blocked event loop on its side).
 */
export const DEFAULT_REDIS_OPTIONS: RedisDefaults = Object.freeze({
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (times: number) => Math.min(50 * times, 500),
  // A store call's deadline: a server that accepts the connection but does not answer fails the call.
  commandTimeout: 10_000,
  connectTimeout: 10_000,
});

export interface SetupReport {
  /** The server's `redis_version`. */
  serverVersion: string;
}

/** A Lua script run with EVALSHA (falling back to EVAL once per connection after a restart flushed it). */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

export function lua(source: string): LuaScript {
  return { lua: source, sha: createHash('sha1').update(source).digest('hex') };
}

type Arg = string | number | Buffer;

/** @internal A MULTI being built (ioredis ChainableCommander). */
export type Multi = ReturnType<Redis['multi']>;

/**
 * One ioredis client shared by any number of Kioku stores, with the key prefix. No state on the
 * connection is relied on (no WATCH, no SELECT): every multi-key operation is one Lua script or one
 * MULTI/EXEC, so the client can be shared with the rest of an application and auto-pipelined.
 */
export class RedisConnection {
  /** @internal The ioredis client (typed as ioredis's only inside Kioku; see {@link RedisClient}). */
  readonly client: Redis;
  readonly keys: KeySpace;
  /** The server named in errors: the URL without its password, or host:port of a client passed in. */
  readonly where: string;
  readonly #owned: boolean;
  #closed = false;
  #database: Promise<void> | undefined;

  constructor(options: RedisConnectionOptions) {
    if ((options.url === undefined) === (options.client === undefined)) {
      throw new ValidationError('Give exactly one of `url` and `client`.');
    }
    if (options.url !== undefined) checkUrlScheme('Redis stores', 'url', options.url, ['redis', 'rediss']);
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== 'string' || prefix.length > 200 || /[\p{Cc}]/u.test(prefix)) {
      throw new ValidationError(
        '`prefix` must be a string of at most 200 characters without control characters.',
      );
    }
    if (options.client) {
      // ioredis would put its keyPrefix in front of KEYS but not of SCAN patterns or keys built in Lua.
      if (options.client.options.keyPrefix) {
        throw new ValidationError(
          'The ioredis client has a `keyPrefix`; pass a client without one and use Kioku’s `prefix` option.',
        );
      }
      this.client = options.client as Redis;
      this.where = `redis://${options.client.options.host ?? '127.0.0.1'}:${options.client.options.port ?? 6379}`;
      this.#owned = false;
    } else {
      this.client = new Redis(options.url!, {
        ...DEFAULT_REDIS_OPTIONS,
        ...(options.redisOptions as RedisOptions | undefined),
      });
      this.where = redactedUrl(options.url!);
      // Connection errors surface as rejected commands (StorageError); without a listener ioredis would
      // also print every reconnection failure.
      this.client.on('error', () => {});
      this.#owned = true;
    }
    this.keys = new KeySpace(prefix);
  }

  get prefix(): string {
    return this.keys.prefix;
  }

  /** Check the server is reachable and new enough (Redis 7: `PEXPIRE … GT`, `redis.sha1hex`). Optional. */
  async setup(): Promise<SetupReport> {
    const info = await this.run('INFO', () => this.client.info('server'));
    const serverVersion = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
    const major = Number.parseInt(serverVersion, 10);
    if (!(major >= 7)) {
      throw new StorageError(`Kioku needs Redis 7 or later; the server is ${serverVersion}.`, {
        details: { serverVersion },
      });
    }
    return { serverVersion };
  }

  /** Quit the client when Kioku opened it (idempotent); a client you passed in stays open. */
  async close(): Promise<void> {
    if (!this.#owned || this.#closed) return;
    this.#closed = true;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  /**
   * Run Redis commands; anything that is not already a KiokuError becomes a StorageError with the cause.
   * The first command of a connection waits for the database check (see `#checkDatabase`).
   */
  async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.#database ??= this.#checkDatabase().catch((error: unknown) => {
      this.#database = undefined;
      throw error;
    });
    await this.#database;
    try {
      return await fn();
    } catch (error) {
      throw toStorageError(error, what, this.where);
    }
  }

  /** EVALSHA, or EVAL when the server does not have the script (first use, or after a restart). */
  async eval<T = unknown>(script: LuaScript, keys: readonly string[], args: readonly Arg[]): Promise<T> {
    return this.run('script', async () => {
      try {
        return (await this.client.evalsha(script.sha, keys.length, ...keys, ...args)) as T;
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return (await this.client.eval(script.lua, keys.length, ...keys, ...args)) as T;
      }
    });
  }

  /** `eval`, with every bulk string of the reply as a Buffer (binary values). */
  async evalBuffer<T = unknown>(
    script: LuaScript,
    keys: readonly string[],
    args: readonly Arg[],
  ): Promise<T> {
    return this.run('script', async () => {
      try {
        return (await this.client.callBuffer('EVALSHA', [script.sha, keys.length, ...keys, ...args])) as T;
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return (await this.client.callBuffer('EVAL', [script.lua, keys.length, ...keys, ...args])) as T;
      }
    });
  }

  /**
   * @internal
   * MULTI/EXEC: the commands run atomically (nothing else runs between them). Scripts inside use EVAL,
   * never EVALSHA, because a NOSCRIPT error inside EXEC would fail one command and let the others run.
   * Throws when any command failed.
   */
  async transaction(what: string, build: (multi: Multi) => void): Promise<unknown[]> {
    return this.run(what, async () => {
      const multi = this.client.multi();
      build(multi);
      const results = await multi.exec();
      if (results === null) throw new Error('transaction aborted');
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      return results.map(([, value]) => value);
    });
  }

  /**
   * ioredis reports a failed `SELECT` of the URL's database (`/99` on a server with 16) only as an
   * 'error' event and then runs every command in database 0: the data would land in the wrong place. So
   * the database the connection is in (`CLIENT INFO`, Redis 6.2+) must be the one asked for.
   */
  async #checkDatabase(): Promise<void> {
    const wanted = this.client.options.db ?? 0;
    let info: string;
    try {
      info = String(await this.client.call('CLIENT', 'INFO'));
    } catch (error) {
      throw toStorageError(error, 'CLIENT INFO', this.where);
    }
    const actual = Number(/\bdb=(\d+)/.exec(info)?.[1] ?? wanted);
    if (actual === wanted) return;
    const databases = await this.client
      .config('GET', 'databases')
      .then((reply) => Number((reply as string[])[1]))
      .catch(() => undefined);
    const has =
      databases === undefined || Number.isNaN(databases)
        ? 'fewer databases (its `databases` setting)'
        : `${databases} databases (0–${databases - 1}, its \`databases\` setting)`;
    throw new StorageError(
      `Redis database ${wanted} of ${this.where} does not exist: the server has ${has}. Use a database index the server has in the URL's path, or raise \`databases\` in redis.conf; nothing was read or written.`,
      { details: { server: this.where, database: wanted, ...(databases ? { databases } : {}) } },
    );
  }

  /** Every key matching `pattern`, by SCAN (never KEYS), without duplicates. */
  async scan(pattern: string): Promise<string[]> {
    return this.run('SCAN', async () => {
      const found = new Set<string>();
      let cursor = '0';
      do {
        const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        for (const key of keys) found.add(key);
        cursor = next;
      } while (cursor !== '0');
      return [...found];
    });
  }

  /** Delete every key under the prefix (SCAN + UNLINK); returns how many. For tests and teardown. */
  async deleteAll(): Promise<number> {
    return this.unlink(await this.scan(this.keys.everything()));
  }

  /** Remove these keys (in batches of 500); returns how many existed. */
  async unlink(keys: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < keys.length; i += 500) {
      deleted += await this.run('UNLINK', () => this.client.unlink(...keys.slice(i, i + 500)));
    }
    return deleted;
  }
}

const TOKEN_BASE = randomBytes(8).toString('hex');
let tokenCount = 0;

/**
 * A token no other call, process or restart produces (partition epochs): random per process, then a
 * counter, which is much cheaper than a random draw per write.
 */
export function randomToken(): string {
  tokenCount += 1;
  return `${TOKEN_BASE}.${tokenCount.toString(36)}`;
}

/** `url` without its password (`redis://user:***@host:port/db`), for messages. */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return 'the Redis URL given (not a valid URL)';
  return redactUrl(url).replace(/\/$/, '');
}

/**
 * ioredis's ways of saying the server could not be reached: with `maxRetriesPerRequest: 0` a command
 * issued while (re)connecting fails with the retries message; a closed or refused connection says so.
 */
const UNREACHABLE =
  /max retries per request|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|Connection is closed|Stream isn't writeable|connect ECONN|Command timed out|LOADING|ECONNRESET|EPIPE/i;

export function toStorageError(error: unknown, what: string, where: string): Error {
  if (isKiokuError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const name = error instanceof Error ? error.name : typeof error;
  if (UNREACHABLE.test(message)) {
    // ioredis's retry counter tells the user nothing: say the connection is not open instead.
    const reason = /max retries per request/i.test(message) ? 'no open connection' : message.slice(0, 200);
    return new StorageError(
      `cannot reach ${where} (Redis ${what}: ${reason}): is redis-server running there, and is the URL right? The call may be retried; a write may or may not have been applied.`,
      { cause: error, retryable: true, details: { redisError: name, server: where } },
    );
  }
  return new StorageError(`Redis ${what} at ${where} failed: ${message.slice(0, 500)}`, {
    cause: error,
    details: { redisError: name, server: where },
  });
}
