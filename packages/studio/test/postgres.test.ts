import { randomBytes } from 'node:crypto';
import type { KiokuStores } from '@kioku/core';
import { createPostgresStores } from '@kioku/store-postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDirectory, type RunningStudio, serveStudio } from '../src/index.js';
import { type Browser, expectAccessible, openBrowser, text } from './browser.js';
import { BOB_SECRET, factsOf, type Seeded, seed } from './seed.js';

const URL_ =
  process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/*
 * Kioku Studio over PostgreSQL (a fresh schema), in Chromium: browsing a seeded user and search; then the
 * same store served read-only, where every change is refused and nothing changes.
 */
describe('Kioku Studio on PostgreSQL, in a browser', () => {
  const schema = `studio_${randomBytes(6).toString('hex')}`;
  let stores: KiokuStores;
  let browser: Browser;
  let seeded: Seeded;

  beforeAll(async () => {
    stores = createPostgresStores({ url: URL_, schema, clientOptions: { max: 4, onnotice: () => {} } });
    await stores.setup();
    seeded = await seed(stores);
    browser = await openBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await stores?.close();
    const sql = postgres(URL_, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  });

  async function serve(readOnly: boolean): Promise<RunningStudio> {
    return serveStudio({
      stores,
      directory: await openDirectory({ type: 'postgres', url: URL_, schema }),
      storeLabel: 'postgres://127.0.0.1/test',
      backend: 'postgres',
      readOnly,
    });
  }

  it('lists the users with their counts and browses one, never showing another user', async () => {
    const studio = await serve(false);
    try {
      const { page } = browser;
      await page.goto(studio.url);
      await expectAccessible(page);
      const alice = page.locator('tbody tr', { hasText: 'alice' });
      expect(await text(alice.locator('td[data-label="facts"]'))).toBe('5');
      expect(await text(alice.locator('td[data-label="plans"]'))).toBe('1');
      expect(await text(alice.locator('td[data-label="sessions"]'))).toBe('1');
      await alice.getByRole('link', { name: 'alice' }).click();
      await page.waitForURL('**/users/alice');
      await page.getByRole('link', { name: 'Facts', exact: true }).click();
      await page.waitForURL('**/users/alice/facts');
      await expectAccessible(page);
      expect(await text(page.locator('h2#facts-heading'))).toBe('5 facts');
      await page.goto(`${studio.address}/users/alice/sessions/${seeded.sessionId}`);
      await page.getByText('What tea do I like?').waitFor();
      await page.goto(`${studio.address}/users/alice/search?q=tea`);
      await expectAccessible(page);
      expect(
        await page.getByRole('region', { name: 'Fact results' }).locator('tbody tr').count(),
      ).toBeGreaterThan(1);
      expect(await page.textContent('body')).not.toContain(BOB_SECRET);
      expect((await page.goto(`${studio.address}/users/alice/facts/${seeded.bobFact.id}`))?.status()).toBe(
        404,
      );
    } finally {
      await studio.close();
    }
  });

  it('read-only: shows no control that changes memory, and refuses every POST', async () => {
    const studio = await serve(true);
    try {
      const before = await factsOf(stores, seeded.alice);
      const { page } = browser;
      await page.goto(studio.url);
      await page.getByText('read-only').first().waitFor();
      await page.goto(`${studio.address}/users/alice/review`);
      await expectAccessible(page);
      expect(await page.getByRole('button', { name: /Apply|Revert/ }).count()).toBe(0);
      await page.goto(`${studio.address}/users/alice/quarantine`);
      expect(await page.getByRole('button', { name: /Confirm|Drop/ }).count()).toBe(0);
      await page.goto(`${studio.address}/users/carol/forget`);
      await expectAccessible(page);
      expect(await page.getByRole('button', { name: 'Forget carol' }).count()).toBe(0);
      // A form posted from the page itself (same origin, with the cookie) is still refused.
      const statuses: number[] = [];
      for (const action of [
        `/users/alice/review/${seeded.proposedId}/apply`,
        `/users/alice/quarantine/${seeded.quarantined.id}/drop`,
        '/users/carol/forget',
        `/users/alice/facts/${seeded.tea.id}/forget`,
      ]) {
        await page.evaluate(
          (to) => {
            const form = document.createElement('form');
            form.method = 'post';
            form.action = to;
            form.innerHTML = '<input name="confirm" value="carol"><button id="post-it">Post</button>';
            document.body.append(form);
          },
          `${new URL(studio.address).pathname}${action}`,
        );
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.locator('#post-it').click(),
        ]);
        statuses.push(response.status());
        await page.waitForLoadState();
      }
      expect(statuses).toEqual([403, 403, 403, 403]);
      expect(await factsOf(stores, seeded.alice)).toEqual(before);
      expect(await stores.facts.count(seeded.carol)).toBe(1);
    } finally {
      await studio.close();
    }
  });
});
