import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium (installed by .ci/run); Playwright's own browser download is never used. */
export const CHROMIUM = process.env.KIOKU_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Where the README's screenshots are written: by a run of these tests with `KIOKU_SCREENSHOTS=1`
 * (`pnpm --filter @kioku/studio screenshots`); other runs take them too but keep them out of the tree.
 */
export const SCREENSHOTS = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  process.env.KIOKU_SCREENSHOTS ? 'docs' : 'dist/screenshots',
);

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, nothing fetched from outside. */
export async function openBrowser(): Promise<Browser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'kioku-studio-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 860 },
    acceptDownloads: true,
  });
  // Waits end on the page's own events; this limit only stops a run that is stuck.
  context.setDefaultTimeout(Number(process.env.KIOKU_PW_TIMEOUT ?? 300_000));
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) => `${v.id} (${v.impact}) on ${page.url()}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  expect(bad).toEqual([]);
}

/** A screenshot of the page for the README, at a laptop width (and a phone width when `phone`). */
export async function screenshot(page: Page, name: string, options: { phone?: boolean } = {}): Promise<void> {
  const size = page.viewportSize();
  if (options.phone) await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
  if (options.phone && size) await page.setViewportSize(size);
}

/** A locator's text once it is on the page (playwright-core has no web-first assertions: wait, then read). */
export async function text(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  return (await locator.first().textContent()) ?? '';
}

/** A raw request with any Host header (fetch cannot set one): what a DNS-rebinding page would send. */
export function requestWithHost(url: string, host: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host, cookie } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
