import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forgetUser, verifyErased } from '@kioku/core/passes';
import { afterEach, describe, expect, it } from 'vitest';
import { createJsonStores } from '../src/index.js';

/* After forgetUser, no file or directory under the data directory names the user or holds her words. */

const WORD = 'leukemiaxq';
const ALICE = { userId: 'alice-residue' };

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function everyPath(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    out.push(path.join(entry.parentPath, entry.name));
  }
  return out;
}

describe('JSON files: erasure leaves no residue', () => {
  it('forgetUser: no path names her and no file holds her words', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kioku-json-erase-'));
    const stores = createJsonStores({ directory: dir });
    await stores.setup();
    await stores.facts.create(ALICE, { content: `Her daughter Mia was diagnosed with ${WORD} in Porto` });
    await stores.documents.create(ALICE, { title: 'Notes', text: `${WORD} treatment plan` });
    await stores.working.set(ALICE, 'session/abc123/notes', `${WORD} appointment`);
    const session = await stores.sessions.create(ALICE);
    await stores.sessions.transcriptAppend(ALICE, session.id, [{ role: 'user', content: `About ${WORD}` }]);
    await stores.details.create(ALICE, { description: 'note', content: `${WORD} details` });
    await stores.facts.create({ userId: 'bob' }, { content: 'Bob likes tea' });

    await forgetUser(stores, ALICE.userId);
    expect(await verifyErased(stores, ALICE.userId)).toEqual({ erased: true });
    const hits: string[] = [];
    for (const file of await everyPath(dir)) {
      if (file.includes(ALICE.userId)) hits.push(file);
      const text = await readFile(file, 'latin1').catch(() => '');
      if (text.includes(WORD) || text.includes(ALICE.userId)) hits.push(file);
    }
    expect(hits).toEqual([]);
    await stores.close();
  });
});
