import type { Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import { html, pageNumber, pager, plural, scrollTable, truncate, userPath, when } from '../html.js';
import { NotFoundError } from '../kioku.js';

const PER_PAGE = 50;

/** Working memory (with expiry), knowledge documents and offloaded details of a user. */
export function registerRecords(app: Hono, studio: Studio): void {
  app.get('/users/:user/working', async (c) => {
    const scope = scopeOf(c);
    const page = pageNumber(c.req.query('page'));
    const all = await studio.stores.working.list(scope);
    const pages = Math.max(1, Math.ceil(all.length / PER_PAGE));
    const entries = all.slice((page - 1) * PER_PAGE, page * PER_PAGE);
    const values = await Promise.all(entries.map((e) => studio.stores.working.get(scope, e.key)));
    const body = html`<p>${plural(all.length, 'live entry')}, oldest first. Expired entries are never shown (nor given to the agent).</p>
${
  entries.length === 0
    ? html`<p>Nothing in working memory.</p>`
    : scrollTable(
        'Working memory',
        html`<table class="stack"><thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">Expires</th><th scope="col">Stored</th><th scope="col" class="num">Version</th></tr></thead><tbody>${entries.map(
          (
            e,
            i,
          ) => html`<tr><td data-label="Key"><code>${e.key}</code>${e.category ? html`<br><span class="muted">${e.category}</span>` : ''}${e.tags.length ? html`<br><span class="muted">${e.tags.join(', ')}</span>` : ''}</td>
<td data-label="Value"><pre class="content">${truncate(values[i]?.value ?? '', 600)}</pre></td>
<td data-label="Expires"><time datetime="${e.expiresAt}" data-expires="${e.expiresAt}">${e.expiresAt.slice(0, 16).replace('T', ' ')}</time></td>
<td data-label="Stored">${when(e.storedAt)}</td><td class="num" data-label="Version">${e.version}</td></tr>`,
        )}</tbody></table>`,
      )
}
${pager(page, pages, (n) => userPath(scope, '/working', { page: n }), 'Working memory')}`;
    return render(
      c,
      studio,
      { title: `Working memory of ${scope.userId}`, scope, section: '/working' },
      body,
    );
  });

  app.get('/users/:user/documents', async (c) => {
    const scope = scopeOf(c);
    const page = pageNumber(c.req.query('page'));
    const all = await studio.stores.documents.list(scope);
    const pages = Math.max(1, Math.ceil(all.length / PER_PAGE));
    const docs = all.slice((page - 1) * PER_PAGE, page * PER_PAGE);
    const body = html`<p>${plural(all.length, 'document')}, oldest first.</p>
${
  docs.length === 0
    ? html`<p>No documents.</p>`
    : scrollTable(
        'Documents',
        html`<table class="stack"><thead><tr><th scope="col">Title</th><th scope="col">Tags</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Chunks</th><th scope="col">Added</th></tr></thead><tbody>${docs.map(
          (
            d,
          ) => html`<tr><td data-label="Title"><a href="${userPath(scope, `/documents/${encodeURIComponent(d.id)}`)}">${d.title}</a>${d.description ? html`<br><span class="muted">${d.description}</span>` : ''}</td>
<td data-label="Tags">${d.tags.join(', ')}</td><td class="num" data-label="Tokens">${d.tokenCount}</td><td class="num" data-label="Chunks">${d.chunks.length}</td><td data-label="Added">${when(d.addedAt)}</td></tr>`,
        )}</tbody></table>`,
      )
}
${pager(page, pages, (n) => userPath(scope, '/documents', { page: n }), 'Documents')}`;
    return render(c, studio, { title: `Documents of ${scope.userId}`, scope, section: '/documents' }, body);
  });

  app.get('/users/:user/documents/:id', async (c) => {
    const scope = scopeOf(c);
    const docId = id(c.req.param('id'), 'document id');
    const doc = await studio.stores.documents.get(scope, docId);
    if (!doc) throw new NotFoundError(`No document ${docId} for ${scope.userId}.`);
    const body = html`<dl class="facts"><dt>Id</dt><dd>${doc.id}</dd><dt>Added</dt><dd>${when(doc.addedAt)}</dd>
<dt>Source</dt><dd><pre class="code">${JSON.stringify(doc.source, null, 2)}</pre></dd><dt>Tokens</dt><dd>${doc.tokenCount} in ${plural(doc.chunks.length, 'chunk')}</dd></dl>
<h2>Text</h2><pre class="content">${truncate(doc.text, 100_000)}</pre>`;
    return render(c, studio, { title: doc.title, scope, section: '/documents' }, body);
  });

  app.get('/users/:user/details', async (c) => {
    const scope = scopeOf(c);
    const page = pageNumber(c.req.query('page'));
    // Newest first; the contract has a limit but no offset, so a page reads the pages before it too.
    const upTo = await studio.stores.details.list({ userId: scope.userId }, { limit: page * PER_PAGE + 1 });
    const mine = upTo.filter((d) => d.agentId === scope.agentId);
    const details = mine.slice((page - 1) * PER_PAGE, page * PER_PAGE);
    const body = html`<p>Tool outputs and other content offloaded behind a <code>[MemoryRef: …]</code> placeholder, newest first.</p>
${
  details.length === 0
    ? html`<p>No offloaded details.</p>`
    : scrollTable(
        'Offloaded details',
        html`<table class="stack"><thead><tr><th scope="col">MemoryRef</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col" class="num">Tokens</th><th scope="col">Created</th></tr></thead><tbody>${details.map(
          (
            d,
          ) => html`<tr><td data-label="MemoryRef"><a href="${userPath(scope, `/details/${encodeURIComponent(d.id)}`)}">${d.id}</a>${d.active ? '' : html` <span class="badge">inactive</span>`}</td>
<td data-label="Type">${d.type}</td><td data-label="Description">${truncate(d.description, 200)}</td><td class="num" data-label="Tokens">${d.tokenCount}</td><td data-label="Created">${when(d.createdAt)}</td></tr>`,
        )}</tbody></table>`,
      )
}
${pager(page, upTo.length > page * PER_PAGE ? page + 1 : page, (n) => userPath(scope, '/details', { page: n }), 'Offloaded details')}`;
    return render(
      c,
      studio,
      { title: `Offloaded details of ${scope.userId}`, scope, section: '/details' },
      body,
    );
  });

  app.get('/users/:user/details/:id', async (c) => {
    const scope = scopeOf(c);
    const detailId = id(c.req.param('id'), 'MemoryRef id');
    const detail = await studio.stores.details.get(scope, detailId, { includeInactive: true });
    if (!detail) throw new NotFoundError(`No offloaded detail ${detailId} for ${scope.userId}.`);
    const body = html`<dl class="facts"><dt>MemoryRef</dt><dd><code>[MemoryRef: ${detail.id}]</code></dd><dt>Type</dt><dd>${detail.type}</dd>
<dt>Description</dt><dd>${detail.description}</dd>${detail.summary ? html`<dt>Summary</dt><dd>${detail.summary}</dd>` : ''}
<dt>Tokens</dt><dd>${detail.tokenCount}</dd><dt>Created</dt><dd>${when(detail.createdAt)}</dd>
${detail.threadId ? html`<dt>Session</dt><dd><a href="${userPath(scope, `/sessions/${encodeURIComponent(detail.threadId)}`)}">${detail.threadId}</a></dd>` : ''}
${Object.keys(detail.metadata).length ? html`<dt>Metadata</dt><dd><pre class="code">${JSON.stringify(detail.metadata, null, 2)}</pre></dd>` : ''}</dl>
<h2>Content</h2><pre class="code">${truncate(detail.content, 200_000)}</pre>`;
    return render(c, studio, { title: `Detail ${detail.id}`, scope, section: '/details' }, body);
  });
}
