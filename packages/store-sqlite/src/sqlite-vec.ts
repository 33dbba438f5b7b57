import { arch, platform } from 'node:process';
import { UnsupportedError } from '@kioku/core';
import type Database from 'better-sqlite3';
import { getLoadablePath } from 'sqlite-vec';

/** Connections sqlite-vec was loaded into (once each). */
const loaded = new WeakSet<Database.Database>();

/**
 * Loads sqlite-vec (the `vec0` virtual table and its functions) into a connection, once: the prebuilt
 * binary of the `sqlite-vec` package for this platform (Linux and macOS on x64 and arm64, Windows on
 * x64). Elsewhere, or when the platform package was not installed, an UnsupportedError says so: the
 * stores work without it, only the vector index needs it.
 */
export function loadSqliteVec(db: Database.Database): void {
  if (loaded.has(db)) return;
  try {
    db.loadExtension(getLoadablePath());
  } catch (error) {
    throw new UnsupportedError(
      `sqlite-vec could not be loaded on ${platform}-${arch} (${(error as Error).message}). Its prebuilt binaries cover linux-x64, linux-arm64, darwin-x64, darwin-arm64 and windows-x64, from the optional package sqlite-vec-${platform === 'win32' ? 'windows' : platform}-${arch}: reinstall without --no-optional, or use another vector index (Qdrant, pgvector) or none.`,
      { cause: error, details: { platform, arch } },
    );
  }
  loaded.add(db);
}
