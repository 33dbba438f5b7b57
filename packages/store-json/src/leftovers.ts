import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * What a process killed mid-write leaves behind, and how to tell it from a live writer's work: temp files
 * (`.<file>.<host>-<pid>.<random>.tmp`) and lock directories with an owner file naming host and pid.
 * A pid is only meaningful on its own host, so only same-host leftovers of a dead pid are removed at once;
 * anything else is left to age (temp files) or to proper-lockfile's stale timeout (locks).
 */

/** This host, as it appears in temp-file names: a short hash (host names may hold any character). */
export const HOST_TAG = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);

/** A temp file name for `file` written by this process. */
export function tempName(file: string, random: string): string {
  return `.${path.basename(file)}.${HOST_TAG}-${process.pid}.${random}.tmp`;
}

const TEMP = /^\..+\.(?:([0-9a-f]{8})-)?(\d+)\.[0-9a-f]+\.tmp$/;
/** A temp file of another host, or of the old name format without a host, is removed only this old. */
const FOREIGN_TEMP_AGE_MS = 60 * 60_000;

/** True when no process with this pid runs on this host. */
export function isDead(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Remove the temp files of writers that died (see the rule above) under `directory`; returns how many. */
export async function sweepTempFiles(directory: string, now = Date.now()): Promise<number> {
  let removed = 0;
  const visit = async (dir: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        await visit(full);
        continue;
      }
      const match = TEMP.exec(entry.name);
      if (!match) continue;
      const [, host, pid] = match;
      const orphaned =
        host === HOST_TAG
          ? isDead(Number(pid))
          : now - (await stat(full).catch(() => ({ mtimeMs: now }))).mtimeMs > FOREIGN_TEMP_AGE_MS;
      if (
        orphaned &&
        (await unlink(full).then(
          () => true,
          () => false,
        ))
      )
        removed++;
    }
  };
  await visit(directory);
  return removed;
}

/**
 * The owner of lock directory `lockDir` is written beside it (proper-lockfile removes the directory with
 * rmdir, which a file inside would make fail).
 */
const ownerFile = (lockDir: string) => `${lockDir}.owner`;

/** Record this process as the holder of the lock directory `lockDir` (just acquired). */
export async function writeLockOwner(lockDir: string): Promise<void> {
  await writeFile(ownerFile(lockDir), JSON.stringify({ host: os.hostname(), pid: process.pid }));
}

/** Forget the owner after releasing, unless another process has taken the lock and written its own. */
export async function clearLockOwner(lockDir: string): Promise<void> {
  const mine = JSON.stringify({ host: os.hostname(), pid: process.pid });
  if ((await readFile(ownerFile(lockDir), 'utf8').catch(() => '')) === mine) {
    await unlink(ownerFile(lockDir)).catch(() => {});
  }
}

/**
 * A lock directory with no owner file is only ever that young: its holder writes the owner right after
 * taking it. One older than this was left by a process killed in between.
 */
const OWNERLESS_LOCK_AGE_MS = 1_000;

/**
 * The pid in `lockDir`'s owner file: a number, 'elsewhere' (another host's), or undefined (no owner file, or
 * one left empty or half-written by a holder killed as it wrote it).
 */
async function lockOwner(lockDir: string): Promise<number | 'elsewhere' | undefined> {
  let text: string;
  try {
    text = await readFile(ownerFile(lockDir), 'utf8');
  } catch {
    return undefined;
  }
  let owner: { host?: unknown; pid?: unknown };
  try {
    owner = JSON.parse(text) as { host?: unknown; pid?: unknown };
  } catch {
    // Empty or cut short: its writer was killed while naming itself, which is the same as no owner file.
    return undefined;
  }
  return owner.host === os.hostname() && typeof owner.pid === 'number' ? owner.pid : 'elsewhere';
}

/**
 * Remove the lock directory `lockDir` when its holder is gone: its owner file names a dead process of this
 * host (read twice, so a lock taken over meanwhile is left alone), or it has no owner file and is older
 * than OWNERLESS_LOCK_AGE_MS. A lock of another host is left to proper-lockfile's stale timeout.
 */
export async function breakDeadLock(lockDir: string): Promise<boolean> {
  const owner = await lockOwner(lockDir);
  if (owner === 'elsewhere') return false;
  if (owner === undefined) {
    const lock = await stat(lockDir).catch(() => undefined);
    if (!lock || Date.now() - lock.mtimeMs < OWNERLESS_LOCK_AGE_MS) return false;
    if ((await lockOwner(lockDir)) !== undefined) return false;
  } else if (!isDead(owner) || (await lockOwner(lockDir)) !== owner) {
    return false;
  }
  await rm(lockDir, { recursive: true, force: true });
  await unlink(ownerFile(lockDir)).catch(() => {});
  return true;
}
