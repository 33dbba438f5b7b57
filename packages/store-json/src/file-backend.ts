import { mkdir, readdir, readFile, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CorruptDataError, StorageError, type StoreKind } from '@kioku/core';
import type { PartitionRef, RecordChanges, StorageBackend, StoredRecord } from '@kioku/core/adapter';
import lockfile from 'proper-lockfile';
import { writeFileAtomic } from './atomic-file.js';
import { breakDeadLock, clearLockOwner, sweepTempFiles, writeLockOwner } from './leftovers.js';
import { KeyedMutex } from './mutex.js';
import { formatPartitionFile, newVersion, parsePartitionFile } from './partition-file.js';
import {
  AGENTS_DIR,
  decodeSegment,
  LOCKS_DIR,
  partitionFile,
  resolveInside,
  scopeDir,
  USERS_DIR,
} from './paths.js';

export interface JsonFileBackendOptions {
  /** The data directory; created on first write. */
  directory: string;
  /** How long a writer waits for another process's lock before failing (default 30 s). */
  lockTimeoutMs?: number;
  /** Indentation of a file's header and record lines (default 2; 0: none). Each record is one compact line. */
  indent?: number;
}

/** A partition file as read: its version and records (JSON text each), in order. */
interface PartitionFile {
  /** Identity of the file version it was read from: inode, size, mtime (rename → new inode). */
  token: string;
  version: number;
  records: Map<string, string>;
}

const ABSENT = 'absent';

/**
 * Partitions as JSON files, one record per line (the storage seam of `@kioku/core/adapter`):
 *
 *     {
 *       "kind": "facts",
 *       "schemaVersion": 2,
 *       "version": 812735,
 *       "records": [
 *         {"key":"f-1","value":{…the fact…}},
 *         …
 *       ]
 *     }
 *
 * Writes are atomic (temp file, fsync, rename) and serialized per file within the process (a mutex) and
 * across processes (a lock directory under `.locks/`, via proper-lockfile); each checks the file's
 * version under the lock. Parsed files are cached and re-read only when the file on disk changed, so a
 * read costs one `stat`. A file of schemaVersion 1 (written before the record seam) is read as one
 * whole-partition record, which Kioku's stores decode as before and store record by record on their next
 * write. A file that does not parse raises CorruptDataError naming it, and is never overwritten.
 */
export class JsonFileBackend implements StorageBackend {
  readonly directory: string;
  readonly #cache = new Map<string, PartitionFile>();
  readonly #mutex = new KeyedMutex();
  readonly #lockTimeoutMs: number;
  readonly #indent: string;
  /** Temp files of killed writers, removed once before this backend's first operation. */
  #swept: Promise<number> | undefined;

  constructor(options: JsonFileBackendOptions) {
    this.directory = path.resolve(options.directory);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    this.#indent = ' '.repeat(options.indent ?? 2);
  }

  /** Remove temp files that writers killed mid-write left (once per backend; later calls share the first). */
  sweepLeftovers(): Promise<number> {
    this.#swept ??= sweepTempFiles(this.directory);
    return this.#swept;
  }

  async scan(ref: PartitionRef): Promise<{ version: number; records: StoredRecord[] }> {
    await this.sweepLeftovers();
    const file = await this.#load(this.#fileOf(ref));
    return { version: file.version, records: [...file.records].map(([key, json]) => ({ key, json })) };
  }

  async version(ref: PartitionRef): Promise<number> {
    await this.sweepLeftovers();
    return (await this.#load(this.#fileOf(ref))).version;
  }

  async apply(ref: PartitionRef, expectedVersion: number, changes: RecordChanges): Promise<number | null> {
    await this.sweepLeftovers();
    const path = this.#fileOf(ref);
    return this.#exclusive(path, async () => {
      const current = await this.#load(path);
      if (current.version !== expectedVersion) return null;
      // Changed in place: a failed save drops the cached file (`#exclusive`), so it is read again.
      const records = current.records;
      for (const key of changes.delete) records.delete(key);
      for (const record of changes.put) {
        if (record.append) records.delete(record.key);
        records.set(record.key, record.json);
      }
      const version = current.token === ABSENT ? newVersion() : expectedVersion + 1;
      await this.#save(path, ref, version, records);
      return version;
    });
  }

  async replace(ref: PartitionRef, records: readonly StoredRecord[]): Promise<void> {
    await this.sweepLeftovers();
    const path = this.#fileOf(ref);
    await this.#exclusive(path, async () => {
      const current = await this.#load(path).catch(() => undefined);
      const version = current && current.token !== ABSENT ? current.version + 1 : newVersion();
      await this.#save(path, ref, version, new Map(records.map((r) => [r.key, r.json])));
    });
  }

  locate(ref: PartitionRef): Record<string, unknown> {
    return { file: this.#fileOf(ref) };
  }

  async listPartitions(kind: StoreKind, userId?: string): Promise<PartitionRef[]> {
    const usersDir = path.join(this.directory, USERS_DIR);
    const users: Array<[dirName: string, userId: string | undefined]> =
      userId === undefined
        ? (await listNames(usersDir)).map((name) => [name, decodeSegment(name)])
        : [[path.basename(scopeDir(userId, undefined)), userId]];
    const refs: PartitionRef[] = [];
    for (const [dirName, user] of users) {
      if (user === undefined) continue;
      const userDir = path.join(usersDir, dirName);
      refs.push(...(await this.#listScope(userDir, kind, user, undefined)));
      for (const agentName of await listNames(path.join(userDir, AGENTS_DIR))) {
        const agent = decodeSegment(agentName);
        if (agent !== undefined)
          refs.push(...(await this.#listScope(path.join(userDir, AGENTS_DIR, agentName), kind, user, agent)));
      }
    }
    return refs;
  }

  async #listScope(
    dir: string,
    kind: StoreKind,
    userId: string,
    agentId: string | undefined,
  ): Promise<PartitionRef[]> {
    const refs: PartitionRef[] = [];
    if (await isFile(path.join(dir, `${kind}.json`))) refs.push({ kind, userId, agentId });
    for (const name of await listNames(path.join(dir, kind))) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const partition = decodeSegment(name.slice(0, -'.json'.length));
      if (partition !== undefined) refs.push({ kind, userId, agentId, name: partition });
    }
    return refs;
  }

  #fileOf(ref: PartitionRef): string {
    return resolveInside(this.directory, partitionFile(ref));
  }

  /** The file's records: the cached ones when the file is unchanged, else read anew. */
  async #load(file: string): Promise<PartitionFile> {
    const token = await fileToken(file);
    const cached = this.#cache.get(file);
    if (cached && cached.token === token) return cached;
    if (token === ABSENT) {
      const absent = { token, version: 0, records: new Map<string, string>() };
      this.#cache.set(file, absent);
      return absent;
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new StorageError(`Could not read ${file}: ${(error as Error).message}`, {
        cause: error,
        details: { file },
      });
    }
    let parsed: PartitionFile;
    try {
      parsed = { token, ...parsePartitionFile(text) };
    } catch (error) {
      this.#cache.delete(file);
      throw new CorruptDataError(
        `Kioku data file ${file} is not valid (${(error as Error).message}). Fix or move it; Kioku will not overwrite it.`,
        { cause: error, details: { file } },
      );
    }
    // Re-stat: if the file was replaced while we read it, cache under the token we actually parsed only
    // when it is still current; otherwise the next read will load again.
    if ((await fileToken(file)) === token) this.#cache.set(file, parsed);
    return parsed;
  }

  async #save(file: string, ref: PartitionRef, version: number, records: Map<string, string>): Promise<void> {
    try {
      if (records.size === 0) {
        await unlink(file).catch(ignoreMissing);
        await this.#removeEmptyDirs(path.dirname(file));
      } else await writeFileAtomic(file, formatPartitionFile(ref.kind, version, records, this.#indent));
    } catch (error) {
      this.#cache.delete(file);
      throw new StorageError(`Could not write ${file}: ${(error as Error).message}`, {
        cause: error,
        details: { file },
      });
    }
    this.#cache.set(file, {
      token: await fileToken(file),
      version: records.size === 0 ? 0 : version,
      records,
    });
  }

  /**
   * Remove `dir` and its parents while they are empty, up to the users directory: an erased user leaves
   * no directory named after her (`users/<id>/sessions`). A directory that is not empty stays.
   */
  async #removeEmptyDirs(dir: string): Promise<void> {
    const users = path.join(this.directory, USERS_DIR);
    for (let current = dir; current.startsWith(`${users}${path.sep}`); current = path.dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return;
      }
    }
  }

  /** Run `work` holding this process's mutex and the cross-process lock for `file`. */
  async #exclusive<T>(file: string, work: () => Promise<T>): Promise<T> {
    return this.#mutex.run(file, async () => {
      const release = await this.#lock(file);
      try {
        return await work();
      } catch (error) {
        this.#cache.delete(file);
        throw error;
      } finally {
        await release().catch(() => {});
      }
    });
  }

  async #lock(file: string): Promise<() => Promise<void>> {
    const locks = path.join(this.directory, LOCKS_DIR);
    await mkdir(locks, { recursive: true });
    const lockfilePath = path.join(locks, `${encodeURIComponent(path.relative(this.directory, file))}.lock`);
    const deadline = Date.now() + this.#lockTimeoutMs;
    let compromised: Error | undefined;
    for (;;) {
      try {
        const release = await lockfile.lock(file, {
          realpath: false,
          lockfilePath,
          stale: 10_000,
          onCompromised: (error) => {
            compromised = error;
          },
        });
        await writeLockOwner(lockfilePath).catch(() => {});
        return async () => {
          await release();
          await clearLockOwner(lockfilePath);
          if (compromised) throw compromised;
        };
      } catch (error) {
        // A lock left by a killed process of this host is taken at once, not after the stale timeout.
        if ((error as NodeJS.ErrnoException).code === 'ELOCKED' && (await breakDeadLock(lockfilePath)))
          continue;
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') {
          throw new StorageError(`Could not lock ${file}: ${(error as Error).message}`, {
            cause: error,
            details: { file },
          });
        }
        if (Date.now() > deadline) {
          throw new StorageError(
            `Timed out after ${this.#lockTimeoutMs} ms waiting for the lock on ${file}.`,
            {
              details: { file },
            },
          );
        }
        await sleep(2 + Math.random() * 8);
      }
    }
  }
}

async function fileToken(file: string): Promise<string> {
  try {
    const s = await stat(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
    throw new StorageError(`Could not stat ${file}: ${(error as Error).message}`, {
      cause: error,
      details: { file },
    });
  }
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StorageError(`Could not list ${dir}: ${(error as Error).message}`, {
      cause: error,
      details: { dir },
    });
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
