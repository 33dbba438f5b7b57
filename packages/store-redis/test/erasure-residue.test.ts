import { forgetUser, verifyErased } from '@kioku/core/passes';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStores } from '../src/index.js';
import {
  closeSharedClient,
  deletePrefix,
  freshPrefix,
  keysUnder,
  noServer,
  sharedClient,
} from './helpers.js';

/* After forgetUser, no key under the prefix names the user or holds her words (raw SCAN + DUMP). */

const WORD = 'leukemiaxq';
const ALICE = { userId: 'alice-residue' };

describe.skipIf(noServer)('Redis: erasure leaves no residue', () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(prefix);
    await closeSharedClient();
  });

  it('forgetUser: no key or value under the prefix names her or holds her words', async () => {
    const prefix = freshPrefix();
    prefixes.push(prefix);
    const stores = createRedisStores({ client: sharedClient(), prefix });
    await stores.setup();
    await stores.facts.create(ALICE, { content: `Her daughter Mia was diagnosed with ${WORD} in Porto` });
    await stores.facts.search(ALICE, { query: WORD });
    await stores.documents.create(ALICE, { title: 'Notes', text: `${WORD} treatment plan` });
    await stores.documents.search(ALICE, { query: WORD });
    await stores.working.set(ALICE, 'session/abc123/notes', `${WORD} appointment`);
    const session = await stores.sessions.create(ALICE);
    await stores.sessions.transcriptAppend(ALICE, session.id, [{ role: 'user', content: `About ${WORD}` }]);
    await stores.details.create(ALICE, { description: 'note', content: `${WORD} details` });
    await stores.details.search(ALICE, { query: WORD });
    await stores.facts.create({ userId: 'bob' }, { content: 'Bob likes tea' });

    await forgetUser(stores, ALICE.userId);
    expect(await verifyErased(stores, ALICE.userId)).toEqual({ erased: true });
    const client = sharedClient();
    const hits: string[] = [];
    for (const key of await keysUnder(prefix)) {
      const dump = (await client.dumpBuffer(key))?.toString('latin1') ?? '';
      if (
        key.includes(ALICE.userId) ||
        key.includes(WORD) ||
        dump.includes(WORD) ||
        dump.includes(ALICE.userId)
      ) {
        hits.push(key);
      }
    }
    expect(hits).toEqual([]);
  });
});
