import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forgetUser, verifyErased } from '@kioku/core/passes';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../src/index.js';

/*
 * After forgetUser, her words are in no byte of the database: not in the main file (free pages, FTS5
 * segments) and not in the write-ahead log, read as raw bytes while the stores are still open; and
 * neither is her user id (no partition row, version or index entry keeps it).
 */

const WORD = 'Leukemiaxqz';
/** A user id is often an e-mail address: it must go with her words. */
const ALICE = { userId: 'alice.qzv@example.org' };

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Which of the database's files hold `word` (any case), as raw bytes. */
function filesHolding(file: string, word: string): string[] {
  return [file, `${file}-wal`, `${file}-journal`].filter(
    (f) => existsSync(f) && readFileSync(f).toString('latin1').toLowerCase().includes(word.toLowerCase()),
  );
}

describe('SQLite: erasure leaves no bytes behind', () => {
  it('forgetUser: neither the database file nor its -wal holds her words or her user id', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'kioku-sqlite-erase-'));
    const file = path.join(dir, 'kioku.db');
    const stores = createSqliteStores({ file });
    await stores.setup();
    try {
      for (let i = 0; i < 20; i++) {
        await stores.facts.create(ALICE, {
          content: `Her daughter Mia was diagnosed with ${WORD} in Porto (${i})`,
        });
      }
      await stores.documents.create(ALICE, { title: 'Notes', text: `${WORD} treatment plan, week by week` });
      await stores.working.set(ALICE, 'session/abc123/notes', `${WORD} appointment`);
      const session = await stores.sessions.create(ALICE);
      await stores.sessions.transcriptAppend(ALICE, session.id, [{ role: 'user', content: `About ${WORD}` }]);
      await stores.details.create(ALICE, { description: 'note', content: `${WORD} details` });
      await stores.facts.create({ userId: 'bob' }, { content: 'Bob likes tea' });
      expect(filesHolding(file, WORD)).not.toEqual([]);
      expect(filesHolding(file, ALICE.userId)).not.toEqual([]);

      await forgetUser(stores, ALICE.userId);
      expect(await verifyErased(stores, ALICE.userId)).toEqual({ erased: true });
      expect(filesHolding(file, WORD)).toEqual([]);
      expect(filesHolding(file, ALICE.userId)).toEqual([]);
      expect((await stores.facts.search({ userId: 'bob' }, { query: 'tea' })).length).toBe(1);
    } finally {
      await stores.close();
    }
  });
});
