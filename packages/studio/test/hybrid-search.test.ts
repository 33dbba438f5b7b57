import { createInMemoryStores, HashingEmbedder, withEmbeddings } from '@kioku/core';
import { describe, expect, it } from 'vitest';
import { serveStudio } from '../src/index.js';
import { sessionCookie } from './session.js';

/** With vectors, search shows each fact's lexical and vector rank beside the fused ranking the agent gets. */
describe('search over hybrid stores', () => {
  it("shows the fused ranking with each side's rank and the cosine similarity", async () => {
    const stores = withEmbeddings(createInMemoryStores(), { embedder: new HashingEmbedder() });
    const alice = { userId: 'alice' };
    const tea = await stores.facts.create(alice, { content: 'Likes green tea in the morning' });
    await stores.facts.create(alice, { content: 'Lives in Lisbon' });
    const studio = await serveStudio({ stores });
    try {
      const cookie = await sessionCookie(studio);
      const page = await (
        await fetch(`${studio.address}/users/alice/search?q=green+tea`, { headers: { cookie } })
      ).text();
      const expected = (await stores.facts.search(alice, { query: 'green tea', limit: 20 })).map(
        (h) => h.fact.id,
      );
      const shown = [...page.matchAll(/<a href="\/k-[\w-]+\/users\/alice\/facts\/([^"]+)">/g)].map(
        (m) => m[1],
      );
      expect(shown).toEqual(expected);
      expect(page).toContain('Vector rank');
      const row = page.slice(page.indexOf(tea.id), page.indexOf('</tr>', page.indexOf(tea.id)));
      expect(row).toMatch(/data-label="Lexical rank">#1</);
      expect(row).toMatch(/data-label="Vector rank">#1 \(cosine 0\.\d{3}\)</);
    } finally {
      await studio.close();
    }
  });
});
