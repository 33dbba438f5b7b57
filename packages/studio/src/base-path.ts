import { randomBytes } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';

/*
 * Studio lives under a random path (`/k-<random>`) chosen at each start, and its session cookie's Path is
 * that path: a browser sends the cookie to no other path, so no other local server (cookies are shared
 * by every port of 127.0.0.1) receives it, and a page that does not know the path cannot reach Studio.
 * Studio's own routes and links are written from `/`; this module maps them under the base path, both
 * ways: the incoming path loses the base (Hono's `getPath`), and every `href`, `src`, `action` and
 * `Location` Studio writes gains it.
 */

/** A new base path: `/k-` and 16 random bytes, base64url. */
export function newBasePath(): string {
  return `/k-${randomBytes(16).toString('base64url')}`;
}

/** `pathname` without `base` (`/` for the base itself); undefined when it is not under `base`. */
export function pathUnder(base: string, pathname: string): string | undefined {
  if (pathname === base) return '/';
  if (!pathname.startsWith(`${base}/`)) return undefined;
  return pathname.slice(base.length);
}

/**
 * One leading slash, whatever came: `//evil.example/x` or `/\evil.example` as a redirect target would send
 * the browser to another site (a protocol-relative address).
 */
export function localPath(pathname: string): string {
  return pathname.replace(/^[/\\]+/, '/');
}

/** Hono's `getPath` for an app under `base`: routes see the path without it (outside it: unchanged). */
export function routePathUnder(base: string): (request: Request) => string {
  return (request) => {
    const url = request.url;
    const start = url.indexOf('/', url.indexOf('://') + 3);
    const pathname = start === -1 ? '/' : url.slice(start).replace(/[?#].*$/, '');
    let decoded = pathname;
    try {
      decoded = decodeURI(pathname);
    } catch {
      // A malformed escape: route on the path as written (it matches nothing and gets a 404).
    }
    return pathUnder(base, decoded) ?? decoded;
  };
}

const LINK_ATTRIBUTE = /\b(href|src|action)="\/(?![/\\])/g;

/**
 * The first middleware of the app: a path outside `base` is 404 (nothing said about Studio), and the
 * response's links and redirect target are put under `base`. Studio escapes every `"` of the text it
 * shows, so `href="/` is only ever Studio's own markup.
 */
export function mountedAt(base: string): MiddlewareHandler {
  return async (c, next) => {
    if (pathUnder(base, new URL(c.req.url).pathname) === undefined) {
      return c.text('Not found', 404, { connection: 'close' });
    }
    await next();
    const location = c.res.headers.get('location');
    if (location?.startsWith('/')) c.res.headers.set('location', `${base}${localPath(location)}`);
    if (c.res.headers.get('content-type')?.startsWith('text/html')) {
      const page = (await c.res.text()).replace(LINK_ATTRIBUTE, `$1="${base}/`);
      const headers = new Headers(c.res.headers);
      headers.delete('content-length');
      c.res = new Response(page, { status: c.res.status, headers });
    }
  };
}
