import type { Hono } from 'hono';
import { id, render, type Studio, scopeOf } from '../context.js';
import { html, pageNumber, pager, plural, scrollTable, truncate, userPath, when } from '../html.js';
import { isKiokuSession, KIOKU_SESSION_KEY, NotFoundError, type Scope, type SessionInfo } from '../kioku.js';
import { ledgerBar, ledgerTable } from './ledger-view.js';
import { planView } from './plans-view.js';

const PER_PAGE = 50;
const TRANSCRIPT_STEP = 50;

/** The user's sessions newest first; Kioku's own (changesets, feedback, logs) only when asked for. */
export async function sessionsPage(studio: Studio, scope: Scope, page: number, own: boolean) {
  const all = (await studio.stores.sessions.list(scope)).filter((s) => own || !isKiokuSession(s)).reverse();
  return {
    total: all.length,
    pages: Math.max(1, Math.ceil(all.length / PER_PAGE)),
    sessions: all.slice((page - 1) * PER_PAGE, page * PER_PAGE),
  };
}

async function sessionOf(studio: Studio, scope: Scope, sessionId: string): Promise<SessionInfo> {
  const session = await studio.stores.sessions.get(scope, sessionId);
  if (!session) throw new NotFoundError(`No session ${sessionId} for ${scope.userId}.`);
  return session;
}

/** A user's sessions; one session with its transcript, k-v map, plan and recorded turns; one turn. */
export function registerSessions(app: Hono, studio: Studio): void {
  app.get('/users/:user/sessions', async (c) => {
    const scope = scopeOf(c);
    const own = c.req.query('own') === '1';
    const page = pageNumber(c.req.query('page'));
    const { total, pages, sessions } = await sessionsPage(studio, scope, page, own);
    const body = html`
<p>${plural(total, 'session')}, newest first. ${
      own
        ? html`<a href="${userPath(scope, '/sessions')}">Hide Kioku's own sessions</a>`
        : html`<a href="${userPath(scope, '/sessions', { own: 1 })}">Show Kioku's own sessions too</a> (changesets, feedback, logs)`
    }</p>
${scrollTable(
  'Sessions',
  html`<table class="stack"><thead><tr><th scope="col">Session</th><th scope="col">Title</th><th scope="col">Created</th></tr></thead>
<tbody>${sessions.map(
    (s) =>
      html`<tr><td data-label="Session"><a href="${userPath(scope, `/sessions/${s.id}`)}">${s.id}</a>${
        isKiokuSession(s)
          ? html` <span class="badge">Kioku: ${String(s.metadata[KIOKU_SESSION_KEY])}</span>`
          : ''
      }</td><td data-label="Title">${s.title ?? html`<span class="muted">untitled</span>`}</td><td data-label="Created">${when(s.createdAt)}</td></tr>`,
  )}</tbody></table>`,
)}
${pager(page, pages, (n) => userPath(scope, '/sessions', { page: n, own: own ? 1 : undefined }), 'Sessions')}`;
    return render(c, studio, { title: `Sessions of ${scope.userId}`, scope, section: '/sessions' }, body);
  });

  app.get('/users/:user/sessions/:session', async (c) => {
    const scope = scopeOf(c);
    const sessionId = id(c.req.param('session'), 'session id');
    const session = await sessionOf(studio, scope, sessionId);
    const last = Math.min(Math.max(pageNumber(c.req.query('last')), 1) * TRANSCRIPT_STEP, 100_000);
    const [transcript, kv, plan, turns] = await Promise.all([
      studio.stores.sessions.transcriptReadLast(scope, sessionId, last + 1),
      studio.stores.sessions.kvList(scope, sessionId),
      studio.stores.plans.get({ ...scope, threadId: sessionId }),
      studio.ledgers.list(scope, sessionId),
    ]);
    const more = transcript.length > last;
    const shown = more ? transcript.slice(1) : transcript;
    const own = isKiokuSession(session);
    const body = html`
<dl class="facts"><dt>Id</dt><dd>${session.id}</dd><dt>Created</dt><dd>${when(session.createdAt)}</dd>
<dt>Stores</dt><dd>${session.storeTypes.join(', ')}</dd>
${Object.keys(session.metadata).length ? html`<dt>Metadata</dt><dd><pre class="code">${JSON.stringify(session.metadata, null, 2)}</pre></dd>` : ''}</dl>
${own ? '' : html`<p><a href="${userPath(scope, `/sessions/${sessionId}/forget`)}">Forget this session…</a> (a dry run comes first)</p>`}
<h2>Plan</h2>
${plan ? planView(plan) : html`<p>No plan in this session.</p>`}
<h2>Recorded turns</h2>
${
  turns.length === 0
    ? html`<p>No turn ledgers recorded for this session (an app records them with <code>TurnLedgerLog</code>).</p>`
    : turns.map(
        (t) =>
          html`<div class="card"><h3><a href="${userPath(scope, `/sessions/${sessionId}/turns/${t.turn}`)}">Turn ${t.turn}</a> <span class="muted">${when(t.recordedAt)}</span></h3>${ledgerBar(t.ledger)}</div>`,
      )
}
<h2>Transcript</h2>
${more ? html`<p><a href="${userPath(scope, `/sessions/${sessionId}`, { last: last / TRANSCRIPT_STEP + 1 })}">Show ${TRANSCRIPT_STEP} older entries</a></p>` : ''}
${
  shown.length === 0
    ? html`<p>Empty.</p>`
    : scrollTable(
        'Transcript',
        html`<table class="stack"><thead><tr><th scope="col">Time</th><th scope="col">Role</th><th scope="col">Content</th></tr></thead><tbody>${shown.map(
          (
            e,
          ) => html`<tr><td data-label="Time">${when(e.ts)}</td><td data-label="Role">${e.role}${e.name ? ` (${e.name})` : ''}</td>
<td data-label="Content"><pre class="content">${truncate(e.content, 4000)}</pre>${
            e.toolCalls?.length
              ? html`<ul>${e.toolCalls.map((t) => html`<li>calls <code>${t.name}</code> <code>${truncate(t.arguments, 300)}</code></li>`)}</ul>`
              : ''
          }</td></tr>`,
        )}</tbody></table>`,
      )
}
<h2>Key-value map</h2>
${
  kv.length === 0
    ? html`<p>Empty.</p>`
    : scrollTable(
        'Key-value map',
        html`<table class="stack"><thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col" class="num">Version</th><th scope="col">Set</th></tr></thead><tbody>${kv.map(
          (e) =>
            html`<tr><td data-label="Key">${e.key}</td><td data-label="Value"><pre class="content">${truncate(e.value, 600)}</pre></td><td class="num" data-label="Version">${e.version}</td><td data-label="Set">${when(e.ts)}</td></tr>`,
        )}</tbody></table>`,
      )
}`;
    return render(
      c,
      studio,
      {
        title: session.title ? `Session: ${session.title}` : `Session ${sessionId}`,
        scope,
        section: '/sessions',
      },
      body,
    );
  });

  app.get('/users/:user/sessions/:session/turns/:turn', async (c) => {
    const scope = scopeOf(c);
    const sessionId = id(c.req.param('session'), 'session id');
    await sessionOf(studio, scope, sessionId);
    const turn = Number(c.req.param('turn'));
    const found = (await studio.ledgers.list(scope, sessionId)).find((t) => t.turn === turn);
    if (!found)
      throw new NotFoundError(`No ledger recorded for turn ${c.req.param('turn')} of session ${sessionId}.`);
    const body = html`<p><a href="${userPath(scope, `/sessions/${sessionId}`)}">Back to the session</a> · recorded ${when(found.recordedAt)}</p>
<h2>Where the tokens went</h2>
${ledgerBar(found.ledger)}
<h2>Memory blocks</h2>
${ledgerTable(found.ledger)}`;
    return render(c, studio, { title: `Turn ${turn}`, scope, section: '/sessions' }, body);
  });

  app.get('/users/:user/plans', async (c) => {
    const scope = scopeOf(c);
    const page = pageNumber(c.req.query('page'));
    const { pages, sessions } = await sessionsPage(studio, scope, page, false);
    const plans = await Promise.all(
      sessions.map((s) => studio.stores.plans.get({ ...scope, threadId: s.id })),
    );
    const found = sessions.flatMap((s, i) => (plans[i] ? [{ session: s, plan: plans[i]! }] : []));
    const body = html`<p class="muted">A plan belongs to a session; these are the plans of the sessions on this page (${sessions.length} sessions, newest first).</p>
${found.length === 0 ? html`<p>No plans in these sessions.</p>` : found.map(({ session, plan }) => html`<h2><a href="${userPath(scope, `/sessions/${session.id}`)}">${session.title ?? session.id}</a></h2>${planView(plan)}`)}
${pager(page, pages, (n) => userPath(scope, '/plans', { page: n }), 'Plans')}`;
    return render(c, studio, { title: `Plans of ${scope.userId}`, scope, section: '/plans' }, body);
  });
}
