import type { Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import {
  type Html,
  html,
  pageNumber,
  pager,
  plural,
  scrollTable,
  truncate,
  userPath,
  when,
} from '../html.js';
import { type Fact, isQuarantined, NotFoundError, type Scope, sourceLabel } from '../kioku.js';

const PER_PAGE = 50;

interface Node {
  name: string;
  path: string;
  count: number;
  children: Map<string, Node>;
}

/** Categories (`user-preferences/drinks`) as a tree, each node with the facts under it. */
function categoryTree(categories: { category: string; count: number }[]): Node {
  const root: Node = { name: '', path: '', count: 0, children: new Map() };
  for (const { category, count } of categories) {
    let node = root;
    root.count += count;
    for (const part of category.split('/')) {
      const path = node.path ? `${node.path}/${part}` : part;
      let child = node.children.get(part);
      if (!child) {
        child = { name: part, path, count: 0, children: new Map() };
        node.children.set(part, child);
      }
      child.count += count;
      node = child;
    }
  }
  return root;
}

function treeList(scope: Scope, node: Node, current: string | undefined): Html {
  return html`<ul>${[...node.children.values()].map(
    (
      child,
    ) => html`<li><a href="${userPath(scope, '/facts', { category: child.path })}"${child.path === current ? html` aria-current="true"` : ''}>${child.name}</a> <span class="muted">${child.count}</span>
${child.children.size > 0 ? treeList(scope, child, current) : ''}</li>`,
  )}</ul>`;
}

/** Where a fact came from, with its quarantine mark: the labels the agent's prompt shows too. */
export function factBadges(fact: Fact): Html {
  return html`<span class="badge">${sourceLabel(fact.provenance)}</span>${
    isQuarantined(fact) ? html` <span class="badge danger">quarantined</span>` : ''
  }${fact.provenance.confirmed ? html` <span class="badge ok">confirmed</span>` : ''}`;
}

export function factRow(scope: Scope, fact: Fact): Html {
  return html`<tr>
<td data-label="Fact"><a href="${userPath(scope, `/facts/${encodeURIComponent(fact.id)}`)}">${fact.id}</a></td>
<td data-label="Content">${fact.title ? html`<strong>${fact.title}</strong><br>` : ''}<span class="content">${truncate(fact.content, 240)}</span></td>
<td data-label="Category">${fact.category}</td>
<td data-label="Tags">${fact.tags.join(', ')}</td>
<td data-label="Source">${factBadges(fact)}</td>
<td data-label="Version" class="num">${fact.version}</td>
<td data-label="Updated">${when(fact.updatedAt)}</td>
</tr>`;
}

export function factTable(label: string, scope: Scope, facts: Fact[]): Html {
  return scrollTable(
    label,
    html`<table class="stack"><thead><tr><th scope="col">Fact</th><th scope="col">Content</th><th scope="col">Category</th><th scope="col">Tags</th><th scope="col">Source</th><th scope="col" class="num">Version</th><th scope="col">Updated</th></tr></thead>
<tbody>${facts.map((f) => factRow(scope, f))}</tbody></table>`,
  );
}

/** A user's facts, newest updated first, a page at a time, beside the category tree; and one fact. */
export function registerFacts(app: Hono, studio: Studio): void {
  app.get('/users/:user/facts', async (c) => {
    const scope = scopeOf(c);
    const category = c.req.query('category') || undefined;
    const tag = c.req.query('tag') || undefined;
    const page = pageNumber(c.req.query('page'));
    const filter = { ...(category ? { category } : {}), ...(tag ? { tags: [tag] } : {}) };
    const [total, facts, categories] = await Promise.all([
      studio.stores.facts.count(scope, filter),
      studio.stores.facts.list(scope, {
        ...filter,
        order: 'updated',
        limit: PER_PAGE,
        offset: (page - 1) * PER_PAGE,
      }),
      studio.stores.facts.categories(scope),
    ]);
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const body = html`<div class="cols">
<nav class="tree" aria-label="Categories">
<h2>Categories</h2>
<p><a href="${userPath(scope, '/facts')}"${category ? '' : html` aria-current="true"`}>All</a> <span class="muted">${categoryTree(categories).count}</span></p>
${treeList(scope, categoryTree(categories), category)}
</nav>
<section aria-labelledby="facts-heading">
<h2 id="facts-heading">${plural(total, 'fact')}${category ? html` in ${category}` : ''}${tag ? html` tagged ${tag}` : ''}</h2>
<form class="row" method="get" action="${userPath(scope, '/facts')}">
${scope.agentId ? html`<input type="hidden" name="agent" value="${scope.agentId}">` : ''}
${category ? html`<input type="hidden" name="category" value="${category}">` : ''}
<div><label for="tag">Tag</label><input id="tag" name="tag" type="text" value="${tag ?? ''}"></div>
<button type="submit" class="secondary">Filter by tag</button>
</form>
${facts.length === 0 ? html`<p>No facts here.</p>` : factTable('Facts', scope, facts)}
${pager(page, pages, (n) => userPath(scope, '/facts', { category, tag, page: n }), 'Facts')}
</section></div>`;
    return render(c, studio, { title: `Facts of ${scope.userId}`, scope, section: '/facts' }, body);
  });

  app.get('/users/:user/facts/:id', async (c) => {
    const scope = scopeOf(c);
    const factId = id(c.req.param('id'), 'fact id');
    const fact = await studio.stores.facts.get(scope, factId);
    if (!fact) throw new NotFoundError(`No fact ${factId} for ${scope.userId}.`);
    const p = fact.provenance;
    const mark = p.quarantine ?? p.confirmed;
    const body = html`
<p>${factBadges(fact)}</p>
${fact.title ? html`<h2>${fact.title}</h2>` : ''}
<pre class="content">${fact.content}</pre>
<h2>Record</h2>
<dl class="facts">
<dt>Id</dt><dd>${fact.id}</dd>
<dt>Category</dt><dd><a href="${userPath(scope, '/facts', { category: fact.category })}">${fact.category}</a></dd>
<dt>Tags</dt><dd>${fact.tags.length ? fact.tags.map((t) => html`<a href="${userPath(scope, '/facts', { tag: t })}">${t}</a> `) : '—'}</dd>
<dt>Version</dt><dd>${fact.version}</dd>
<dt>Created</dt><dd>${when(fact.createdAt)}</dd>
<dt>Updated</dt><dd>${when(fact.updatedAt)}</dd>
<dt>Source</dt><dd>${p.source}${p.toolName ? ` (${p.toolName})` : ''}</dd>
${p.sessionId ? html`<dt>Session</dt><dd><a href="${userPath(scope, `/sessions/${encodeURIComponent(p.sessionId)}`)}">${p.sessionId}</a>${p.turn !== undefined ? `, turn ${p.turn}` : ''}</dd>` : ''}
${p.sourceIds?.length ? html`<dt>Made from</dt><dd>${p.sourceIds.map((s) => html`<a href="${userPath(scope, `/facts/${encodeURIComponent(s)}`)}">${s}</a> `)}</dd>` : ''}
${p.note ? html`<dt>Note</dt><dd>${p.note}</dd>` : ''}
${Object.keys(fact.metadata).length ? html`<dt>Metadata</dt><dd><pre class="code">${JSON.stringify(fact.metadata, null, 2)}</pre></dd>` : ''}
</dl>
${
  mark
    ? html`<h2>${p.quarantine ? 'Quarantine' : 'Confirmed by the user'}</h2>
<p>Detector score ${mark.score}${p.confirmed ? html`, confirmed ${when(p.confirmed.confirmedAt)}` : ''}.</p>
<ul>${mark.hits.map((h) => html`<li><strong>${h.rule}</strong> (weight ${h.weight}): “${h.evidence}”</li>`)}</ul>
${p.quarantine ? html`<p><a href="${userPath(scope, '/quarantine')}">Review it in the quarantine queue</a></p>` : ''}`
    : ''
}
<h2>Privacy</h2>
<p><a href="${userPath(scope, `/facts/${encodeURIComponent(fact.id)}/forget`)}">Forget this fact…</a> (a dry run comes first)</p>`;
    return render(c, studio, { title: `Fact ${fact.id}`, scope, section: '/facts' }, body);
  });
}
