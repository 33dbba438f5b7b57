import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { tempName } from './leftovers.js';

/**
 * Replace `file` with `content` so that readers see either the old or the new file, never a mix, and the
 * new content survives a crash once this resolves: write a temporary file beside it, fsync it, rename it
 * over the target, then fsync the directory so the rename itself is durable.
 */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName(file, randomBytes(4).toString('hex')));
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  // An erasure removes a user's emptied directories: one removed between mkdir and open is made again.
  for (let attempt = 0; handle === undefined; attempt++) {
    await mkdir(dir, { recursive: true });
    try {
      handle = await open(temp, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
    }
  }
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
  } finally {
    await handle?.close().catch(() => {});
  }
}
