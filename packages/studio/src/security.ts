import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { localPath } from './base-path.js';

/*
 * Studio shows and erases a user's memory, so it is locked like a local admin page:
 * - Studio lives under a random path (base-path.ts), printed at start with the access token;
 * - the access token (random, printed at start) comes once in the URL and is exchanged for a session
 *   value (random, per start, never the token) in an HttpOnly, SameSite=Strict cookie whose Path is the
 *   random path: no other local server the browser visits receives it. The URL is redirected to one
 *   without the token;
 * - a request body over 64 KiB is refused (413) before it is read, and a refusal closes the connection
 *   (the rest of a large body is not read either);
 * - every request's Host must name this server (DNS rebinding), every POST's Origin must be this server;
 * - every POST carries a form token derived from the access token (cross-site request forgery);
 * - in read-only mode every POST is refused, whatever it carries.
 */

/** A new access token: 32 random bytes, base64url. */
export function newAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

function sameSecret(a: string, b: string): boolean {
  // Hash both first: equal lengths for timingSafeEqual, and no early exit on a length difference.
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

/** The form token of an access token (what a page embeds; never the access token itself). */
export function formToken(accessToken: string): string {
  return createHmac('sha256', accessToken).update('kioku-studio-form').digest('base64url');
}

/** The largest request body Studio reads: its forms carry ids and a few short fields. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface Guard {
  readonly token: string;
  /** What the cookie carries: random, per start, never the access token. */
  readonly session: string;
  /** The random path Studio lives under (the cookie's Path). */
  readonly base: string;
  /** `host:port` values a request's Host may have (set once the server listens). */
  hosts: ReadonlySet<string>;
  /** Cookie name, per port: two studios on one machine must not overwrite each other's cookie. */
  cookie: string;
  readonly readOnly: boolean;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The Host values this server answers to: the loopback names, the bound host and the extra names. */
export function allowedHosts(bound: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set([...LOOPBACK_NAMES, bound.includes(':') ? `[${bound}]` : bound, ...extra]);
  return new Set([...names].map((name) => `${name.toLowerCase()}:${port}`));
}

/** A refusal page; the connection is closed after it, so whatever body the request still has is not read. */
function refuse(c: Context, status: 400 | 401 | 403 | 413, title: string, text: string) {
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Kioku Studio</title><link rel="stylesheet" href="/assets/studio.css"></head><body><main id="main"><h1>${title}</h1><p>${text}</p></main></body></html>`,
    status,
    { connection: 'close' },
  );
}

/** A body over MAX_BODY_BYTES is refused: by its Content-Length before any of it is read, else once over. */
export const limitBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) =>
    refuse(
      c,
      413,
      'Too large',
      `Studio's forms are small: a request body over ${MAX_BODY_BYTES} bytes is refused.`,
    ),
});

/** Every response: no caching, no framing, no script or style but the package's own. */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('Cache-Control', 'no-store');
  c.header('X-Content-Type-Options', 'nosniff');
  // `same-origin`, not `no-referrer`: with no referrer at all a browser sends `Origin: null` on a POST.
  c.header('Referrer-Policy', 'same-origin');
  c.header('X-Frame-Options', 'DENY');
  c.header(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
};

/** A Host header this server does not answer to is refused before anything else (DNS rebinding). */
export function checkHost(guard: Guard): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host')?.toLowerCase();
    if (!host || !guard.hosts.has(host)) {
      return refuse(c, 403, 'Unknown host', 'This server answers only to the address it printed at start.');
    }
    await next();
  };
}

/**
 * The access token from `?token=` is exchanged for the session cookie (Path: the base path) and the URL
 * redirected to one without it; every other request needs the session cookie. Without either, 401 and
 * nothing of the store.
 */
export function checkAccess(guard: Guard): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const given = url.searchParams.get('token');
    if (given !== null) {
      if (!sameSecret(given, guard.token)) {
        return refuse(c, 401, 'Wrong access token', 'Open the address Kioku Studio printed when it started.');
      }
      setCookie(c, guard.cookie, guard.session, { httpOnly: true, sameSite: 'Strict', path: guard.base });
      url.searchParams.delete('token');
      // The path as routed (without the base: mountedAt puts it back), with one leading slash.
      return c.redirect(`${localPath(c.req.path)}${url.search}`, 303);
    }
    const cookie = getCookie(c, guard.cookie);
    if (cookie === undefined || !sameSecret(cookie, guard.session)) {
      return refuse(
        c,
        401,
        'Access token needed',
        'Open the address Kioku Studio printed when it started (it carries the access token).',
      );
    }
    await next();
  };
}

/**
 * A POST (every state change is one) must come from this server's own page: its Origin names an allowed
 * host, and its form carries the form token. In read-only mode it is refused whatever it carries.
 */
export function checkPost(guard: Guard): MiddlewareHandler {
  const expected = formToken(guard.token);
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    if (c.req.method !== 'POST')
      return refuse(c, 400, 'Not allowed', 'Studio changes memory with POST only.');
    if (guard.readOnly) {
      return refuse(
        c,
        403,
        'Read-only',
        'Kioku Studio was started with --read-only: nothing can be changed.',
      );
    }
    const origin = c.req.header('origin');
    let originHost: string | undefined;
    try {
      originHost = origin ? new URL(origin).host.toLowerCase() : undefined;
    } catch {
      originHost = undefined;
    }
    if (!originHost || !guard.hosts.has(originHost)) {
      return refuse(c, 403, 'Refused', 'A change must come from a Kioku Studio page of this server.');
    }
    const form = await c.req.parseBody();
    const csrf = typeof form.csrf === 'string' ? form.csrf : '';
    if (!sameSecret(csrf, expected)) {
      return refuse(
        c,
        403,
        'Refused',
        'The form is out of date or from elsewhere: reload the page and try again.',
      );
    }
    await next();
  };
}
