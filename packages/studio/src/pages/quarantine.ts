import type { Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import { html, notice, plural, postForm, userPath, when } from '../html.js';

/** The quarantine queue: facts the injection detector flagged, with its reasons; confirm or drop each. */
export function registerQuarantine(app: Hono, studio: Studio): void {
  app.get('/users/:user/quarantine', async (c) => {
    const scope = scopeOf(c);
    const page = studio.page(c);
    const queue = await studio.kioku.quarantine.list(scope);
    const done = c.req.query('done');
    const body = html`${done === 'confirm' ? notice('Confirmed: the memory is recalled like any other from now on.', 'ok') : done === 'drop' ? notice('Dropped: the memory was deleted.', 'ok') : ''}
<p class="muted">A fact written by a model or a tool whose text reads like instructions to a model waits here. The agent never sees it until you confirm it; dropping deletes it.</p>
<p>${plural(queue.length, 'quarantined fact')}.</p>
${queue.map((fact) => {
  const mark = fact.provenance.quarantine!;
  const path = (verb: string) => userPath(scope, `/quarantine/${encodeURIComponent(fact.id)}/${verb}`);
  return html`<article class="card" aria-labelledby="q-${fact.id}">
<h2 id="q-${fact.id}"><a href="${userPath(scope, `/facts/${encodeURIComponent(fact.id)}`)}">${fact.id}</a> <span class="badge danger">score ${mark.score}</span></h2>
<pre class="content">${fact.content}</pre>
<p class="muted">From ${fact.provenance.source}${fact.provenance.toolName ? ` (${fact.provenance.toolName})` : ''}, ${when(fact.createdAt)}</p>
${mark.reason ? html`<p><strong>${mark.reason[0]!.toUpperCase()}${mark.reason.slice(1)}.</strong></p>` : ''}
<h3>Why the detector flagged it</h3>
<ul>${mark.hits.map((h) => html`<li><strong>${h.rule}</strong> (weight ${h.weight}): “${h.evidence}”</li>`)}</ul>
${postForm(page, path('confirm'), 'Confirm', { label: `Confirm fact ${fact.id}` })}
${postForm(page, path('drop'), 'Drop', { label: `Drop fact ${fact.id}`, danger: true })}
</article>`;
})}`;
    return render(c, studio, { title: `Quarantine of ${scope.userId}`, scope, section: '/quarantine' }, body);
  });

  app.post('/users/:user/quarantine/:id/:verb{confirm|drop}', async (c) => {
    const scope = scopeOf(c);
    const factId = id(c.req.param('id'), 'fact id');
    const verb = c.req.param('verb');
    if (verb === 'confirm') await studio.kioku.quarantine.confirm(scope, factId);
    else await studio.kioku.quarantine.drop(scope, factId);
    return c.redirect(userPath(scope, '/quarantine', { done: verb }), 303);
  });
}
