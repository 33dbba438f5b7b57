import type { Context, Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import { previewCascade } from '../forget-preview.js';
import {
  type Html,
  html,
  notice,
  type Page,
  plural,
  postForm,
  scrollTable,
  userPath,
  when,
} from '../html.js';
import { type ErasureReceipt, NotFoundError, type Scope, STORE_KINDS, ValidationError } from '../kioku.js';
import { type AnyReceipt, type CascadeReceipt, cascadeReceipt } from '../receipts.js';

function receiptTable(receipt: AnyReceipt): Html {
  const rows: [string, number, string][] =
    receipt.format === 'kioku.cascade-receipt'
      ? (Object.entries(receipt.removed) as [string, string[]][]).map(([kind, ids]) => [
          kind,
          ids.length,
          ids.join(', '),
        ])
      : receipt.removed.map((r) => [r.kind, r.count, r.backend]);
  const third = receipt.format === 'kioku.cascade-receipt' ? 'Ids' : 'Backend';
  return scrollTable(
    'Receipt',
    html`<table><thead><tr><th scope="col">Kind</th><th scope="col" class="num">Records</th><th scope="col">${third}</th></tr></thead>
<tbody>${rows.map(([kind, n, extra]) => html`<tr><th scope="row">${kind}</th><td class="num">${n}</td><td>${extra || '—'}</td></tr>`)}</tbody>
<tfoot><tr><th scope="row">total</th><td class="num">${receipt.total}</td><td><code>${receipt.digest}</code></td></tr></tfoot></table>`,
  );
}

/** The typed confirmation: the button is enabled (by the script) once the word is typed; the server checks it. */
function confirmForm(page: Page, action: string, word: string, button: string, error?: string): Html {
  if (page.readOnly) return notice('Read-only: nothing can be forgotten here.');
  return html`<form method="post" action="${action}" class="card">
<input type="hidden" name="csrf" value="${page.csrf}">
${error ? notice(error, 'danger') : ''}
<label for="confirm">Type <code>${word}</code> to confirm</label>
<div class="row"><input id="confirm" name="confirm" type="text" autocomplete="off" data-confirm="${word}" aria-describedby="confirm-help" required>
<button type="submit" class="danger">${button}</button></div>
<p id="confirm-help" class="muted">This cannot be undone. The receipt is shown next, to download.</p>
</form>`;
}

async function confirmed(c: Context, word: string): Promise<boolean> {
  const form = await c.req.parseBody();
  return form.confirm === word;
}

/** What was forgotten and must not be learnt again: hashes only (the list keeps no text), each revocable. */
async function suppressionSection(studio: Studio, page: Page, scope: Scope, revoked?: string): Promise<Html> {
  const entries = await studio.kioku.privacy.suppressions.list(scope.userId);
  const rows = entries.map(
    (e) =>
      html`<tr><td><code>${e.hash.slice(0, 16)}…</code></td><td>${when(e.at)}</td><td>${postForm(
        page,
        userPath({ userId: scope.userId }, `/suppressions/${encodeURIComponent(e.hash)}/revoke`),
        'Revoke',
        { label: `Revoke suppression ${e.hash.slice(0, 16)}` },
      )}</td></tr>`,
  );
  return html`<h2>Forgotten facts that stay forgotten</h2>
${revoked ? notice(`Revoked ${revoked.slice(0, 16)}…: extraction may learn that fact again.`, 'ok') : ''}
<p class="muted">A forgotten fact goes on this list as a keyed hash of its words (never its text), so extraction, the dream and reviews do not learn it again. Revoke an entry to let it be learnt again.</p>
<p>${plural(entries.length, 'suppressed fact')}.</p>
${
  entries.length === 0
    ? ''
    : scrollTable(
        'Suppression list',
        html`<table><thead><tr><th scope="col">Hash</th><th scope="col">Forgotten</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody></table>`,
      )
}`;
}

/**
 * Forgetting: the whole user, one fact or one session — a dry run first, a typed confirmation, a receipt;
 * and the suppression list of what was forgotten.
 */
export function registerPrivacy(app: Hono, studio: Studio): void {
  const backends = Object.fromEntries(STORE_KINDS.map((kind) => [kind, studio.backend]));

  app.get('/users/:user/privacy', async (c) => {
    const scope = scopeOf(c);
    const suppressions = await suppressionSection(studio, studio.page(c), scope, c.req.query('revoked'));
    const body = html`<h2>Forget</h2>
<ul>
<li><a href="${userPath(scope, '/forget')}">Forget user ${scope.userId}…</a> — every record of every agent, verified by a scan, with an erasure receipt.</li>
<li>Forget one fact: open it from <a href="${userPath(scope, '/facts')}">Facts</a> (the facts made from it go too).</li>
<li>Forget one session: open it from <a href="${userPath(scope, '/sessions')}">Sessions</a> (its plan, offloaded details and the facts extracted from it go too).</li>
</ul>
<p class="muted">Each starts with a dry run showing the receipt it will produce; nothing is removed until you type the confirmation.</p>
${suppressions}`;
    return render(c, studio, { title: 'Privacy', scope, section: '/privacy' }, body);
  });

  app.post('/users/:user/suppressions/:hash/revoke', async (c) => {
    const scope = scopeOf(c);
    const hash = c.req.param('hash');
    if (!/^[0-9a-f]{64}$/.test(hash))
      throw new ValidationError(`Not a suppression hash: ${hash.slice(0, 80)}`);
    if (!(await studio.kioku.privacy.suppressions.revoke(scope.userId, hash)))
      throw new NotFoundError(`No suppression ${hash.slice(0, 16)}… for user ${scope.userId}.`);
    return c.redirect(userPath({ userId: scope.userId }, '/privacy', { revoked: hash }), 303);
  });

  const userPage = async (c: Context, error?: string) => {
    const scope = scopeOf(c);
    const dry = await forgetUserDryRun(studio, scope.userId, backends);
    const body = html`<p>Forgetting a user erases every record of <strong>${scope.userId}</strong> — every agent, thread and namespace, Kioku's own sessions and the vector index — then scans every kind again until nothing is left.</p>
<h2>Dry run: the receipt it will produce</h2>
${receiptTable(dry)}
${confirmForm(studio.page(c), userPath({ userId: scope.userId }, '/forget'), scope.userId, `Forget ${scope.userId}`, error)}`;
    return render(
      c,
      studio,
      { title: `Forget user ${scope.userId}`, scope, section: '/privacy' },
      body,
      error ? 400 : 200,
    );
  };
  app.get('/users/:user/forget', (c) => userPage(c));
  app.post('/users/:user/forget', async (c) => {
    const scope = scopeOf(c);
    if (!(await confirmed(c, scope.userId))) return userPage(c, `Type ${scope.userId} exactly to confirm.`);
    const receipt = await studio.kioku.privacy.forgetUser(scope.userId, { backends });
    return c.redirect(`/receipts/${studio.receipts.add(receipt)}`, 303);
  });

  for (const what of ['fact', 'session'] as const) {
    const base = what === 'fact' ? '/users/:user/facts/:id/forget' : '/users/:user/sessions/:id/forget';
    const targetOf = (c: Context) => id(c.req.param('id'), `${what} id`);
    const preview = async (c: Context, error?: string) => {
      const scope = scopeOf(c);
      const target = targetOf(c);
      const removed = await previewCascade(studio.stores, scope, what, target);
      if (removed.facts.length + removed.sessions.length === 0) {
        throw new ValidationError(`Nothing to forget: no ${what} ${target} for ${scope.userId}.`);
      }
      const dry = cascadeReceipt(what, scope, target, removed, true, new Date());
      const path = userPath(
        scope,
        `/${what === 'fact' ? 'facts' : 'sessions'}/${encodeURIComponent(target)}/forget`,
      );
      const body = html`<p>${what === 'fact' ? 'Forgetting a fact also removes the facts made from it (enrichments, merges), and their vectors.' : 'Forgetting a session removes its transcript and k-v map, its plan, the details offloaded in it, the facts extracted from it and what was made from those, and its recorded turn ledgers.'}</p>
<h2>Dry run: the receipt it will produce</h2>
${receiptTable(dry)}
${confirmForm(studio.page(c), path, 'forget', `Forget this ${what}`, error)}`;
      return render(
        c,
        studio,
        { title: `Forget ${what} ${target}`, scope, section: '/privacy' },
        body,
        error ? 400 : 200,
      );
    };
    app.get(base, (c) => preview(c));
    app.post(base, async (c) => {
      const scope = scopeOf(c);
      const target = targetOf(c);
      if (!(await confirmed(c, 'forget'))) return preview(c, 'Type forget exactly to confirm.');
      const removed =
        what === 'fact'
          ? await studio.kioku.privacy.forgetFact(scope, target)
          : await studio.kioku.privacy.forgetSession(scope, target);
      if (what === 'session') await studio.ledgers.forgetSession(scope, target);
      const receipt = cascadeReceipt(what, scope, target, removed, false, new Date());
      return c.redirect(`/receipts/${studio.receipts.add(receipt)}`, 303);
    });
  }

  app.get('/receipts/:rid', (c) => {
    const rid = c.req.param('rid');
    const receipt = studio.receipts.get(rid);
    if (!receipt)
      return render(
        c,
        studio,
        { title: 'No such receipt' },
        html`<p>Receipts live as long as this server runs.</p>`,

        404,
      );
    const scope: Scope = { userId: receipt.userId };
    const title =
      receipt.format === 'kioku.cascade-receipt'
        ? `Forgot ${(receipt as CascadeReceipt).what} ${(receipt as CascadeReceipt).target}`
        : `Forgot user ${receipt.userId}`;
    const at =
      receipt.format === 'kioku.cascade-receipt' ? receipt.at : (receipt as ErasureReceipt).finishedAt;
    const body = html`${notice(html`${plural(receipt.total, 'record')} removed${receipt.format === 'kioku.erasure-receipt' ? `, verified erased after ${plural(receipt.passes, 'pass')}` : ''} (${when(at)}).`, 'ok')}
${receiptTable(receipt)}
<p><a href="/receipts/${rid}/download" download>Download the receipt (JSON)</a> — keep it instead of the data: it names what was removed by count and digest, never by content.</p>
<details><summary>The receipt as JSON</summary><pre class="code">${JSON.stringify(receipt, null, 2)}</pre></details>
<p>${receipt.format === 'kioku.erasure-receipt' ? html`<a href="/">Back to the users</a>` : html`<a href="${userPath(scope)}">Back to ${receipt.userId}</a>`}</p>`;
    return render(c, studio, { title }, body);
  });

  app.get('/receipts/:rid/download', (c) => {
    const receipt = studio.receipts.get(c.req.param('rid'));
    if (!receipt) return c.text('No such receipt.', 404);
    c.header(
      'Content-Disposition',
      `attachment; filename="kioku-receipt-${receipt.userId}-${receipt.digest.slice(7, 19)}.json"`,
    );
    return c.body(`${JSON.stringify(receipt, null, 2)}\n`, 200, { 'Content-Type': 'application/json' });
  });
}

function forgetUserDryRun(
  studio: Studio,
  userId: string,
  backends: Record<string, string>,
): Promise<ErasureReceipt> {
  return studio.kioku.privacy.forgetUser(userId, { dryRun: true, backends });
}
