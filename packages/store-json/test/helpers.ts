import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A fresh temporary data directory, removed by the returned cleanup. */
export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kioku-json-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
