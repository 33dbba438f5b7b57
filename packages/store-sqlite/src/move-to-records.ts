import { StorageError } from '@kioku/core';
import Database from 'better-sqlite3';
import { type MovedRecords, nothingMoved } from './native-move.js';
import { createSqliteStores } from './stores.js';

export type { MovedRecords } from './native-move.js';

/**
 * Moves what the native layout holds in `file` into the records layout in the same file: every kind,
 * every user, each record as it was (ids, versions, timestamps, expiry, transcripts), then empties the
 * native tables, leaving none of their text in the file (see `moveNativeRecords`). All in one transaction:
 * on any error nothing has moved. Idempotent: with the native tables empty it writes nothing. A partition
 * the records layout holds already is replaced by the native one when both have it.
 *
 * The records stores' `setup()` does this by itself when it finds native records; this is the same move
 * as a separate step (e.g. to time it, or before a deploy).
 */
export async function moveSqliteToRecords(file: string): Promise<MovedRecords> {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const records = createSqliteStores({ database: db });
    // The records layout's setup moves the native records it finds, and says how many.
    const report = await records.setup();
    return report.moved ?? nothingMoved();
  } catch (error) {
    throw error instanceof StorageError
      ? error
      : new StorageError(`Moving ${file} to the records layout failed; nothing moved.`, { cause: error });
  } finally {
    db.close();
  }
}
