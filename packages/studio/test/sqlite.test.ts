import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KiokuStores } from '@kioku/core';
import { SuppressionList, verifyErased } from '@kioku/core/passes';
import { createSqliteStores } from '@kioku/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDirectory, type RunningStudio, serveStudio } from '../src/index.js';
import { type Browser, expectAccessible, openBrowser, requestWithHost, screenshot, text } from './browser.js';
import { BOB_SECRET, factsOf, type Seeded, seed } from './seed.js';
import { sessionCookie } from './session.js';

/*
 * Kioku Studio over a SQLite store, in Chromium: the token, browsing a user, search, review, quarantine,
 * forgetting, and that no page of one user shows another's memory. Every page visited is scanned by axe.
 */
describe('Kioku Studio on SQLite, in a browser', () => {
  let dir: string;
  let stores: KiokuStores;
  let studio: RunningStudio;
  let browser: Browser;
  let seeded: Seeded;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kioku-studio-'));
    const file = path.join(dir, 'kioku.db');
    stores = createSqliteStores({ file });
    await stores.setup();
    seeded = await seed(stores);
    studio = await serveStudio({
      stores,
      directory: await openDirectory({ type: 'sqlite', file }),
      storeLabel: 'sqlite:./kioku.db',
      backend: 'sqlite',
    });
    browser = await openBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await studio?.close();
    await stores?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Open a path, check it is accessible and never shows Bob's memory (unless it is Bob's page). */
  async function visit(pathname: string, options: { bob?: boolean } = {}) {
    const { page } = browser;
    const response = await page.goto(`${studio.address}${pathname}`);
    expect(response?.status(), pathname).toBe(200);
    await expectAccessible(page);
    if (!options.bob) expect(await page.textContent('body')).not.toContain(BOB_SECRET);
    return page;
  }

  it('refuses every page without the access token, and opens with it', async () => {
    const { page } = browser;
    const bare = await page.goto(`${studio.address}/users/alice/facts`);
    expect(bare?.status()).toBe(401);
    await expect(page.textContent('h1')).resolves.toBe('Access token needed');
    expect(await page.textContent('body')).not.toContain('Likes tea');
    const wrong = await page.goto(`${studio.address}/?token=not-the-token`);
    expect(wrong?.status()).toBe(401);

    await page.goto(studio.url);
    expect(new URL(page.url()).search).toBe(''); // the token left the address bar for a cookie
    await expect(page.textContent('h1')).resolves.toBe('Users');
    const rows = await page.locator('tbody tr').allTextContents();
    expect(rows.map((r) => r.trim().split(/\s+/)[0])).toEqual(['alice', 'bob', 'carol']);
    await expectAccessible(page);
    await screenshot(page, 'users');
  });

  it('refuses a foreign Host, a cross-site POST and a POST without the form token', async () => {
    const cookie = await sessionCookie(studio);
    expect(await requestWithHost(`${studio.address}/`, 'evil.example', cookie)).toBe(403);
    expect(await requestWithHost(`${studio.address}/`, new URL(studio.origin).host, cookie)).toBe(200);
    const action = `${studio.address}/users/alice/quarantine/${seeded.quarantined.id}/confirm`;
    const crossSite = await fetch(action, {
      method: 'POST',
      headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=x',
    });
    expect(crossSite.status).toBe(403);
    const noForm = await fetch(action, {
      method: 'POST',
      headers: { cookie, origin: studio.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=wrong',
    });
    expect(noForm.status).toBe(403);
    expect(
      (await stores.facts.get(seeded.alice, seeded.quarantined.id))?.provenance.quarantine,
    ).toBeDefined();
  });

  it("browses a user's facts, documents, sessions with transcript, plan and turn ledger, working memory, details", async () => {
    let page = await visit('/users/alice');
    // The user page: the last turns' ledgers, and the memory model's spend per day as the changesets kept it.
    const spend = page.getByRole('region', { name: 'Memory model spend per day' });
    expect(await spend.getByRole('cell', { name: 'consolidation' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: `Turn 0 of session ${seeded.sessionId}` }).count()).toBe(1);
    await screenshot(page, 'user');
    await page.getByRole('link', { name: 'Facts', exact: true }).click();
    await page.waitForURL('**/users/alice/facts');
    await expectAccessible(page);
    expect(await page.textContent('h2#facts-heading')).toBe('5 facts');
    await page.getByRole('navigation', { name: 'Categories' }).getByRole('link', { name: 'drinks' }).click();
    await page.waitForURL('**/facts?category=user-preferences%2Fdrinks');
    expect(await page.textContent('h2#facts-heading')).toBe('3 facts in user-preferences/drinks');
    await screenshot(page, 'facts');
    await screenshot(page, 'facts-phone', { phone: true });
    await expectAccessible(page);
    expect(await page.textContent('body')).not.toContain(BOB_SECRET);

    page = await visit(`/users/alice/facts/${seeded.quarantined.id}`);
    await page.getByText('quarantined', { exact: true }).waitFor();
    await page.getByText('fetch_page').first().waitFor();

    page = await visit('/users/alice/documents');
    await page.getByRole('link', { name: 'Tea brewing guide' }).waitFor();

    page = await visit('/users/alice/sessions');
    expect(await page.locator('tbody tr').count()).toBe(1);
    page = await visit(`/users/alice/sessions/${seeded.sessionId}`);
    await page.getByText('What tea do I like?').waitFor();
    await page.getByText('in progress').waitFor();
    await page.locator('svg.bar').first().waitFor();
    await screenshot(page, 'session');
    page = await visit(`/users/alice/sessions/${seeded.sessionId}/turns/0`);
    await page.getByRole('rowheader', { name: 'fact-recall' }).waitFor();
    await screenshot(page, 'turn');

    page = await visit('/users/alice/working');
    await page.getByText('Wants short answers today').waitFor();
    // The script counts the expiry down (the server wrote an absolute time).
    await page.waitForFunction(() =>
      document.querySelector('[data-expires]')?.textContent?.startsWith('in '),
    );
    page = await visit('/users/alice/details');
    await page.getByRole('region', { name: 'Offloaded details' }).getByRole('link').first().click();
    await page.waitForURL('**/details/**');
    await expectAccessible(page);
    await page.getByText('A long page about tea.').first().waitFor();
    await visit('/users/alice/plans');
    await visit('/users/alice/privacy');
  });

  it("never shows another user's records under a user's pages", async () => {
    const { page } = browser;
    const foreign = await page.goto(`${studio.address}/users/alice/facts/${seeded.bobFact.id}`);
    expect(foreign?.status()).toBe(404);
    expect(await page.textContent('body')).not.toContain(BOB_SECRET);
    const bobSession = (await stores.sessions.list(seeded.bob))[0]!;
    const session = await page.goto(`${studio.address}/users/alice/sessions/${bobSession.id}`);
    expect(session?.status()).toBe(404);
    await visit('/users/alice/search?q=porto+tea');
    await visit(`/users/bob/facts/${seeded.bobFact.id}`, { bob: true });
  });

  it('searches with the ranking explained: score and matched terms per hit', async () => {
    const page = await visit('/users/alice');
    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByLabel("Search alice's memory").fill('green tea');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**/search?q=green+tea');
    await expectAccessible(page);
    const table = page.getByRole('region', { name: 'Fact results' });
    const first = table.locator('tbody tr').first();
    expect(await text(first)).toContain(seeded.greenTea.id);
    expect(await text(first.locator('td[data-label="Matched terms"]'))).toMatch(/green\s+tea/);
    expect(Number(await first.locator('td[data-label="Score"]').textContent())).toBeGreaterThan(0);
    await screenshot(page, 'search');
  });

  it('reviews a dream changeset as a diff, applies it, reverts it: memory as before', async () => {
    const before = await factsOf(stores, seeded.alice);
    const page = await visit('/users/alice/review');
    const card = page.locator(`#cs-${seeded.proposedId}`);
    expect(await text(card.locator('.op-create'))).toContain('Likes green tea, especially in the morning');
    expect(await card.locator('.op-delete').count()).toBe(2);
    await screenshot(page, 'review');
    await card.getByRole('button', { name: `Apply changeset ${seeded.proposedId}` }).click();
    await page.waitForURL('**/review?done=apply**');
    await expectAccessible(page);
    expect(await text(page.getByRole('status'))).toContain('Applied 3 operations');
    const applied = (await factsOf(stores, seeded.alice)).map((f) => f.content);
    expect(applied).toContain('Likes green tea, especially in the morning');
    expect(applied).not.toContain('Likes tea');

    await page.getByRole('button', { name: `Revert changeset ${seeded.proposedId}` }).click();
    await page.waitForURL('**/review?done=revert**');
    expect(await text(page.getByRole('status'))).toContain('Reverted 3 operations');
    const sorted = (facts: Awaited<ReturnType<typeof factsOf>>) =>
      [...facts].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(sorted(await factsOf(stores, seeded.alice))).toEqual(sorted(before));
  });

  it("confirms a quarantined fact after reading the detector's reasons", async () => {
    const page = await visit('/users/alice/quarantine');
    const card = page.locator('article.card', { hasText: seeded.quarantined.id });
    await card.getByRole('heading', { name: 'Why the detector flagged it' }).waitFor();
    expect(await card.locator('li').count()).toBeGreaterThan(0);
    await card.getByText('From text you pasted: it reads like instructions to an AI.').waitFor();
    await screenshot(page, 'quarantine');
    await card.getByRole('button', { name: `Confirm fact ${seeded.quarantined.id}` }).click();
    await page.waitForURL('**/quarantine?done=confirm');
    await expectAccessible(page);
    await page.getByText('0 quarantined facts').waitFor();
    const fact = await stores.facts.get(seeded.alice, seeded.quarantined.id);
    expect(fact?.provenance.quarantine).toBeUndefined();
    expect(fact?.provenance.confirmed?.hits.length).toBeGreaterThan(0);
  });

  it('forgets a user: the dry-run receipt, a typed confirmation, then the receipt to download', async () => {
    const page = await visit('/users/carol/forget');
    const dryDigest = await page.locator('tfoot code').textContent();
    const button = page.getByRole('button', { name: 'Forget carol' });
    expect(await button.isDisabled()).toBe(true);
    await page.getByLabel('Type carol to confirm').fill('caro');
    expect(await button.isDisabled()).toBe(true);
    await page.getByLabel('Type carol to confirm').fill('carol');
    await screenshot(page, 'forget');
    await button.click();
    await page.waitForURL('**/receipts/**');
    await expectAccessible(page);
    expect(await text(page.getByRole('status'))).toContain('2 records removed, verified erased');
    expect(await page.locator('tfoot code').textContent()).toBe(dryDigest);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download the receipt (JSON)' }).click(),
    ]);
    const receipt = JSON.parse(await readFile((await download.path())!, 'utf8'));
    expect(receipt).toMatchObject({
      format: 'kioku.erasure-receipt',
      userId: 'carol',
      total: 2,
      digest: dryDigest,
    });
    expect(await verifyErased(stores, 'carol')).toEqual({ erased: true });
    expect(await stores.facts.count(seeded.alice)).toBeGreaterThan(0);
  });

  it('forgets one session with its plan and the facts extracted from it, dry run first', async () => {
    const page = await visit(`/users/alice/sessions/${seeded.sessionId}/forget`);
    expect(await text(page.getByRole('region', { name: 'Receipt' }))).toContain(seeded.extracted.id);
    await page.getByLabel('Type forget to confirm').fill('forget');
    await page.getByRole('button', { name: 'Forget this session' }).click();
    await page.waitForURL('**/receipts/**');
    await expectAccessible(page);
    expect(await stores.sessions.get(seeded.alice, seeded.sessionId)).toBeNull();
    expect(await stores.plans.get({ ...seeded.alice, threadId: seeded.sessionId })).toBeNull();
    expect((await stores.facts.list(seeded.alice)).map((f) => f.content)).not.toContain(
      'Prefers oolong after lunch',
    );
  });

  it('forgets one fact with the facts made from it: dry run, typed confirmation, receipt', async () => {
    const page = await visit(`/users/alice/facts/${seeded.tea.id}`);
    await page.getByRole('link', { name: 'Forget this fact…' }).click();
    await page.waitForURL(`**/facts/${seeded.tea.id}/forget`);
    await expectAccessible(page);
    expect(await text(page.getByRole('region', { name: 'Receipt' }))).toContain(seeded.tea.id);
    await page.getByLabel('Type forget to confirm').fill('forget');
    await page.getByRole('button', { name: 'Forget this fact' }).click();
    await page.waitForURL('**/receipts/**');
    expect(await text(page.getByRole('status'))).toContain('1 record removed');
    expect(await stores.facts.get(seeded.alice, seeded.tea.id)).toBeNull();
    expect(await stores.facts.get(seeded.alice, seeded.greenTea.id)).not.toBeNull();

    // The forgotten fact is on the suppression list (a hash, never its text) and can be revoked there.
    const privacy = await visit('/users/alice/privacy');
    await privacy.getByText('1 suppressed fact').waitFor();
    expect(await text(privacy.getByRole('region', { name: 'Suppression list' }))).not.toContain('tea');
    await expectAccessible(privacy);
    const [entry] = await new SuppressionList(stores.sessions).list(seeded.alice.userId);
    await privacy.getByRole('button', { name: `Revoke suppression ${entry!.hash.slice(0, 16)}` }).click();
    await privacy.waitForURL('**/privacy?revoked=**');
    expect(await text(privacy.getByRole('status'))).toContain('extraction may learn that fact again');
    await privacy.getByText('0 suppressed facts').waitFor();
    expect(await new SuppressionList(stores.sessions).list(seeded.alice.userId)).toEqual([]);
  });
});
