import type { Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import { type Html, html, notice, type Page, plural, postForm, truncate, userPath, when } from '../html.js';
import { type ChangeOperation, type FactDraft, IdSchema, type KeptChangeset, type Scope } from '../kioku.js';

const FIELDS = ['title', 'content', 'category', 'tags', 'metadata', 'provenance'] as const;

function show(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A fact's fields as a table; with `before`, each changed field as old (struck) and new. */
function draftTable(after: Partial<FactDraft> | undefined, before?: Partial<FactDraft>): Html {
  const rows = FIELDS.filter(
    (f) => (after && after[f] !== undefined) || (before && before[f] !== undefined),
  ).map((f) => {
    const old = show(before?.[f]);
    const now = show(after?.[f]);
    if (before && after && old === now) return html``;
    return html`<tr><th scope="row">${f}</th><td class="diff">${before ? html`<del>${truncate(old, 2000)}</del>` : ''}${before && after ? html`<br>` : ''}${after ? (before ? html`<ins>${truncate(now, 2000)}</ins>` : truncate(now, 2000)) : ''}</td></tr>`;
  });
  return html`<table><tbody>${rows}</tbody></table>`;
}

function operation(scope: Scope, op: ChangeOperation): Html {
  const factLink = (factId: string) =>
    html`<a href="${userPath(scope, `/facts/${encodeURIComponent(factId)}`)}">${factId}</a>`;
  const head =
    op.op === 'create'
      ? html`<strong>create</strong> fact ${factLink(op.after.id)}`
      : op.op === 'update'
        ? html`<strong>update</strong> fact ${factLink(op.before.id)} (version ${op.before.version})`
        : op.op === 'delete'
          ? html`<strong>delete</strong> fact ${factLink(op.before.id)}`
          : html`<strong>create document</strong> ${op.after.title}`;
  const diff =
    op.op === 'create'
      ? draftTable(op.after)
      : op.op === 'update'
        ? draftTable(op.after, op.before)
        : op.op === 'delete'
          ? draftTable(undefined, op.before)
          : html`<pre class="content">${truncate(op.after.text, 1500)}</pre>`;
  return html`<li class="card op-${op.op}"><p>${head}</p><p><span class="muted">Reason:</span> ${op.reason || '—'}</p>${diff}</li>`;
}

function changesetCard(page: Page, scope: Scope, kept: KeptChangeset): Html {
  const cs = kept.changeset;
  const action = (verb: 'apply' | 'revert') =>
    userPath(scope, `/review/${encodeURIComponent(cs.id)}/${verb}`);
  const buttons =
    cs.status === 'proposed'
      ? postForm(page, action('apply'), 'Apply', { label: `Apply changeset ${cs.id}` })
      : cs.status === 'applied' || cs.status === 'partially_applied'
        ? postForm(page, action('revert'), 'Revert', { label: `Revert changeset ${cs.id}`, danger: true })
        : html``;
  return html`<article class="card" id="cs-${cs.id}" aria-labelledby="cs-${cs.id}-h">
<h3 id="cs-${cs.id}-h">${cs.pass} · ${cs.id} <span class="badge">${cs.status.replace('_', ' ')}</span></h3>
<p class="muted">Proposed ${when(cs.createdAt)}${kept.appliedAt ? html`, applied ${when(kept.appliedAt)}` : ''}${kept.revertedAt ? html`, reverted ${when(kept.revertedAt)}` : ''} · ${plural(cs.operations.length, 'operation')}${cs.usage ? ` · model: ${cs.usage.inputTokens} in + ${cs.usage.outputTokens} out tokens` : ''}</p>
${cs.notes?.length ? html`<ul>${cs.notes.map((n) => html`<li class="muted">${n}</li>`)}</ul>` : ''}
${kept.conflicts.length ? html`<div class="notice danger"><p>${plural(kept.conflicts.length, 'conflict')} (left as they were):</p><ul>${kept.conflicts.map((x) => html`<li>${x.message}</li>`)}</ul></div>` : ''}
<ol class="ops" aria-label="Operations">${cs.operations.map((op) => operation(scope, op))}</ol>
${buttons}
</article>`;
}

/** Pending and kept changesets of the memory passes, as before/after diffs; apply and revert. */
export function registerReview(app: Hono, studio: Studio): void {
  app.get('/users/:user/review', async (c) => {
    const scope = scopeOf(c);
    const page = studio.page(c);
    const kept = (await studio.kioku.passes.changesets(scope)).reverse();
    const pending = kept.filter((k) => k.changeset.status === 'proposed');
    const done = kept.filter((k) => k.changeset.status !== 'proposed');
    const verb = c.req.query('done');
    const applied = Number(c.req.query('n') ?? 0);
    const conflicts = Number(c.req.query('conflicts') ?? 0);
    const result =
      verb === 'apply' || verb === 'revert'
        ? notice(
            `${verb === 'apply' ? 'Applied' : 'Reverted'} ${plural(applied, 'operation')} of changeset ${IdSchema.safeParse(c.req.query('cs')).data ?? ''}${conflicts ? `; ${plural(conflicts, 'conflict')} left as they were` : ''}.`,
            conflicts ? 'danger' : 'ok',
          )
        : '';
    const body = html`${result}
<p class="muted">Everything a model writes into memory in the background (extraction, enrichment, the dream, knowledge) is a changeset: each operation with the record before, the record after and the model's reason. A proposed changeset changes nothing until applied; an applied one can be reverted exactly.</p>
<h2>Pending (${pending.length})</h2>
${pending.length === 0 ? html`<p>No changeset waits for review.</p>` : pending.map((k) => changesetCard(page, scope, k))}
<h2>Kept (${done.length})</h2>
${done.length === 0 ? html`<p>None yet.</p>` : done.map((k) => changesetCard(page, scope, k))}`;
    return render(
      c,
      studio,
      { title: `Review ${scope.userId}'s changesets`, scope, section: '/review' },
      body,
    );
  });

  app.post('/users/:user/review/:id/:verb{apply|revert}', async (c) => {
    const scope = scopeOf(c);
    const changesetId = id(c.req.param('id'), 'changeset id');
    const verb = c.req.param('verb');
    const result =
      verb === 'apply'
        ? await studio.kioku.passes.applyKept(scope, changesetId)
        : await studio.kioku.passes.revert(scope, changesetId);
    const n = 'applied' in result ? result.applied.length : result.reverted.length;
    return c.redirect(
      `${userPath(scope, '/review', { done: verb, cs: changesetId, n, conflicts: result.conflicts.length })}#cs-${changesetId}`,
      303,
    );
  });
}
