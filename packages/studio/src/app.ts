import { Hono } from 'hono';
import { SCRIPT, STYLE } from './assets.js';
import { mountedAt, routePathUnder } from './base-path.js';
import type { Studio } from './context.js';
import { html, layout } from './html.js';
import { isKiokuError } from './kioku.js';
import { registerFacts } from './pages/facts.js';
import { registerPrivacy } from './pages/privacy.js';
import { registerQuarantine } from './pages/quarantine.js';
import { registerRecords } from './pages/records.js';
import { registerReview } from './pages/review.js';
import { registerSearch } from './pages/search.js';
import { registerSessions } from './pages/sessions.js';
import { registerUsers } from './pages/users.js';
import { checkAccess, checkHost, checkPost, type Guard, limitBody, securityHeaders } from './security.js';

/**
 * Studio's routes under its base path, behind its guard: the base path, Host, the body limit, then the
 * package's assets, then the session, then POST rules.
 */
export function studioApp(studio: Studio, guard: Guard): Hono {
  const app = new Hono({ getPath: routePathUnder(guard.base) });
  app.use(mountedAt(guard.base), securityHeaders, checkHost(guard), limitBody);
  app.get('/assets/studio.css', (c) => c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/assets/studio.js', (c) =>
    c.body(SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }),
  );
  app.use(checkAccess(guard), checkPost(guard));
  registerUsers(app, studio);
  registerFacts(app, studio);
  registerSessions(app, studio);
  registerRecords(app, studio);
  registerSearch(app, studio);
  registerReview(app, studio);
  registerQuarantine(app, studio);
  registerPrivacy(app, studio);

  app.notFound((c) =>
    c.html(
      layout(studio.page(c), { title: 'Not found' }, html`<p><a href="/">Back to the users</a></p>`),
      404,
    ),
  );
  app.onError((error, c) => {
    const status = isKiokuError(error, 'NOT_FOUND')
      ? 404
      : isKiokuError(error) && error.code !== 'STORAGE'
        ? 400
        : 500;
    const title = status === 404 ? 'Not found' : status === 400 ? 'Cannot do that' : 'Something failed';
    return c.html(
      layout(
        studio.page(c),
        { title },
        html`<p>${error.message}</p><p><a href="/">Back to the users</a></p>`,
      ),
      status,
    );
  });
  return app;
}
