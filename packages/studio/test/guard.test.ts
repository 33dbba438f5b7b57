import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInMemoryStores } from '@kioku/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningStudio, serveStudio } from '../src/index.js';
import { openBrowser } from './browser.js';
import { sessionCookie } from './session.js';

/*
 * The review's findings about Studio's guard, over HTTP against the real server: the cookie never carries
 * the access token and is scoped to Studio's random path, `//host` paths never redirect off the site,
 * an oversized body is refused before it is read, and no secret of the store's URL reaches a page.
 */
describe("Studio's guard", () => {
  let studio: RunningStudio;

  beforeAll(async () => {
    studio = await serveStudio({
      stores: createInMemoryStores(),
      storeLabel: 'postgres://kioku:s3cret-pw@db:5432/app?password=s3cret-q&sslmode=require',
    });
  });
  afterAll(async () => {
    await studio?.close();
  });

  it('exchanges the token for a per-start session value whose cookie Path is the random base path', async () => {
    const base = new URL(studio.address).pathname;
    expect(base).toMatch(/^\/k-[A-Za-z0-9_-]{22}$/);
    expect(studio.url).toBe(`${studio.address}/?token=${studio.token}`);
    const opened = await fetch(studio.url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`${base}/`);
    const setCookie = opened.headers.get('set-cookie') ?? '';
    expect(setCookie).not.toContain(studio.token);
    expect(setCookie).toContain(`Path=${base}`);
    expect(setCookie).toMatch(/HttpOnly/);
    const cookie = setCookie.split(';')[0]!;
    const users = await fetch(`${studio.address}/`, { headers: { cookie } });
    expect(users.status).toBe(200);
    const page = await users.text();
    expect(page).toContain('<h1>Users</h1>');
    expect(page).toContain(`href="${base}/assets/studio.css"`);
    expect(page).not.toMatch(/(?:href|src|action)="\/(?!k-)/);
    // The token as a cookie (what a page got before) opens nothing, and neither does the root path.
    const tokenCookie = `${cookie.split('=')[0]}=${studio.token}`;
    expect((await fetch(`${studio.address}/`, { headers: { cookie: tokenCookie } })).status).toBe(401);
    expect((await fetch(`${studio.origin}/`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(`${studio.origin}/?token=${studio.token}`, { redirect: 'manual' })).status).toBe(404);
  });

  it('never redirects to another site from a //host path', async () => {
    for (const evil of ['//evil.example/x', '///evil.example/', '/%5Cevil.example/']) {
      const opened = await fetch(`${studio.address}${evil}?token=${studio.token}`, { redirect: 'manual' });
      const location = opened.headers.get('location') ?? '';
      expect(location, evil).toMatch(/^\/k-[A-Za-z0-9_-]+\/(?![/\\])/);
      expect(new URL(location, studio.origin).origin, evil).toBe(studio.origin);
    }
  });

  it('refuses an oversized body by its length, before reading it, and closes the connection', async () => {
    const cookie = await sessionCookie(studio);
    const target = new URL(`${studio.address}/users/alice/forget`);
    const result = await new Promise<{ status: number; closed: boolean }>((resolve, reject) => {
      const req = request(target, {
        method: 'POST',
        headers: {
          cookie,
          origin: studio.origin,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(1024 ** 3),
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          // The server closes the socket: the 1 GiB it was promised is never read.
          req.socket?.once('close', () => resolve({ status: res.statusCode ?? 0, closed: true }));
          if (req.socket?.destroyed) resolve({ status: res.statusCode ?? 0, closed: true });
        });
      });
      req.write(Buffer.alloc(16 * 1024, 'a'));
    });
    expect(result).toEqual({ status: 413, closed: true });
  });

  it('shows the store with its password and secret query parameters redacted', async () => {
    const cookie = await sessionCookie(studio);
    const page = await (await fetch(`${studio.address}/`, { headers: { cookie } })).text();
    expect(page).toContain('postgres://kioku:***@db:5432/app?password=***&amp;sslmode=require');
    expect(page).not.toContain('s3cret');
  });

  it('sends neither the token nor the session to another local server the browser visits', async () => {
    const received: string[] = [];
    const other = createServer((req, res) => {
      received.push(`${req.url} cookie=${req.headers.cookie ?? ''}`);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>other</title><p>other');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const browser = await openBrowser();
    try {
      await browser.page.goto(studio.url);
      expect(await browser.page.textContent('h1')).toBe('Users');
      const session = (await browser.context.cookies()).find((c) => c.name.startsWith('kioku-studio'));
      expect(session?.value).toBeTruthy();
      expect(session?.value).not.toBe(studio.token);
      const port = (other.address() as AddressInfo).port;
      await browser.page.goto(`http://127.0.0.1:${port}/`);
      await browser.page.goto(`http://127.0.0.1:${port}/users/alice`);
      expect(received.length).toBeGreaterThanOrEqual(2); // the two pages, and the favicon Chromium asks for
      for (const line of received) {
        expect(line).not.toContain(studio.token);
        expect(line).not.toContain(session!.value);
      }
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
