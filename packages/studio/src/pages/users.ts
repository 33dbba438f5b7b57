import type { Hono } from 'hono';
import { render, type Studio, scopeOf } from '../context.js';
import { DETAIL_COUNT_LIMIT, partitionCounts } from '../counts.js';
import { type Html, html, pageNumber, pager, plural, scrollTable, userPath } from '../html.js';
import { STORE_KINDS, type StoreKind } from '../kioku.js';
import type { RecordedTurn } from '../ledgers.js';
import { type DailySpend, spendPerDay } from '../spend.js';
import { ledgerBar } from './ledger-view.js';

/** Recorded turns the user page shows (newest first); each session's page has them all. */
const LAST_TURNS = 10;
/** Days of memory-model spend the user page shows. */
const SPEND_DAYS = 14;

const PER_PAGE = 50;

function count(counts: Partial<Record<StoreKind, number>> | undefined, kind: StoreKind): Html | string {
  const n = counts?.[kind];
  if (n === undefined) return html`<span class="muted" title="not counted on this backend">—</span>`;
  return kind === 'details' && n > DETAIL_COUNT_LIMIT ? `${DETAIL_COUNT_LIMIT}+` : n.toLocaleString('en-US');
}

/** `/`: every user (and agent) of the store with what each holds; `/users/:user`: one user's overview. */
export function registerUsers(app: Hono, studio: Studio): void {
  app.get('/', async (c) => {
    const prefix = c.req.query('q')?.trim() ?? '';
    const page = pageNumber(c.req.query('page'));
    const found = await studio.directory.list({
      limit: PER_PAGE,
      offset: (page - 1) * PER_PAGE,
      userPrefix: prefix,
    });
    const rows = await Promise.all(
      found.partitions.map(async (p) => {
        const scope =
          p.agentId === undefined ? { userId: p.userId } : { userId: p.userId, agentId: p.agentId };
        return { scope, counts: p.counts ?? (await partitionCounts(studio.stores, scope)) };
      }),
    );
    const pages = Math.max(1, Math.ceil(found.total / PER_PAGE));
    const body = html`
<form class="row" method="get" action="/" role="search">
  <div><label for="q">User id starts with</label><input id="q" name="q" type="search" value="${prefix}"></div>
  <button type="submit">Filter</button>
</form>
<p class="muted">${plural(found.total, 'partition')} (a user, or one of their agents)${prefix ? html` whose user id starts with “${prefix}”` : ''}.</p>
${
  rows.length === 0
    ? html`<p>No users found.</p>`
    : scrollTable(
        'Users',
        html`<table class="stack">
<caption class="muted">Records per kind; sessions exclude Kioku's own.</caption>
<thead><tr><th scope="col">User</th><th scope="col">Agent</th>${STORE_KINDS.map((k) => html`<th scope="col" class="num">${k}</th>`)}</tr></thead>
<tbody>${rows.map(
          ({ scope, counts }) => html`<tr>
<td data-label="User"><a href="${userPath(scope)}">${scope.userId}</a></td>
<td data-label="Agent">${scope.agentId ?? html`<span class="muted">none</span>`}</td>
${STORE_KINDS.map((k) => html`<td class="num" data-label="${k}">${count(counts, k)}</td>`)}
</tr>`,
        )}</tbody></table>`,
      )
}
${pager(page, pages, (n) => `/?${new URLSearchParams({ ...(prefix ? { q: prefix } : {}), page: String(n) })}`, 'Users')}`;
    return render(c, studio, { title: 'Users' }, body);
  });

  app.get('/users/:user', async (c) => {
    const scope = scopeOf(c);
    const [counts, agents, categories, turns, kept] = await Promise.all([
      partitionCounts(studio.stores, scope),
      studio.directory.list({ limit: 1000, offset: 0, userPrefix: scope.userId }),
      studio.stores.facts.categories(scope),
      studio.ledgers.latest(scope, LAST_TURNS),
      studio.kioku.passes.changesets(scope),
    ]);
    const mine = agents.partitions.filter((p) => p.userId === scope.userId);
    const links: [StoreKind, string][] = [
      ['facts', '/facts'],
      ['documents', '/documents'],
      ['sessions', '/sessions'],
      ['working', '/working'],
      ['details', '/details'],
    ];
    const body = html`
<h2>What ${scope.agentId ? 'this agent' : 'this user'} holds</h2>
<ul>${links.map(([kind, sub]) => html`<li><a href="${userPath(scope, sub)}">${kind}</a>: ${count(counts, kind)}</li>`)}
<li><a href="${userPath(scope, '/plans')}">plans</a>: one per session that has one</li></ul>
<h2>Agents</h2>
<p class="muted">Memory is kept per user and agent; “none” is the user's memory outside any agent.</p>
<ul>${mine.map(
      (p) =>
        html`<li><a href="${userPath({ userId: p.userId, ...(p.agentId ? { agentId: p.agentId } : {}) })}"${p.agentId === scope.agentId ? html` aria-current="page"` : ''}>${p.agentId ?? 'none'}</a></li>`,
    )}</ul>
<h2>Categories</h2>
${
  categories.length === 0
    ? html`<p>No facts.</p>`
    : html`<ul>${categories.slice(0, 20).map((cat) => html`<li><a href="${userPath(scope, '/facts', { category: cat.category })}">${cat.category}</a> (${cat.count})</li>`)}</ul>
${categories.length > 20 ? html`<p><a href="${userPath(scope, '/facts')}">All ${categories.length} categories</a></p>` : ''}`
}
<h2>Last turns</h2>
${lastTurns(scope, turns)}
<h2>Memory model spend per day</h2>
${spendTable(spendPerDay(kept))}`;
    return render(c, studio, { title: `User ${scope.userId}`, scope, section: '' }, body);
  });
}

/** The last recorded turns' ledgers, newest first: each a bar of its prompt budget and a link to it. */
function lastTurns(scope: { userId: string; agentId?: string }, turns: readonly RecordedTurn[]): Html {
  if (turns.length === 0) {
    return html`<p class="muted">No turn ledgers recorded (the app keeps them with Studio's <code>TurnLedgerLog</code>).</p>`;
  }
  return html`<ol class="turns">${turns.map(
    (
      t,
    ) => html`<li><a href="${userPath(scope, `/sessions/${t.sessionId}/turns/${t.turn}`)}">Turn ${t.turn} of session ${t.sessionId}</a>
<span class="muted">${t.recordedAt}: ${t.ledger.totalTokens} of ${t.ledger.maxTokens} tokens</span>${ledgerBar(t.ledger)}</li>`,
  )}</ol>`;
}

/** Tokens the memory model spent per day and pass, from the usage the kept changesets record. */
function spendTable(rows: readonly DailySpend[]): Html {
  const days = [...new Set(rows.map((r) => r.day))].slice(0, SPEND_DAYS);
  const shown = rows.filter((r) => days.includes(r.day));
  if (shown.length === 0) {
    return html`<p class="muted">No memory-model usage stored: no kept changeset of this user records any.</p>`;
  }
  return scrollTable(
    'Memory model spend per day',
    html`<table class="stack">
<caption class="muted">Tokens of the memory passes whose changesets were kept (extraction, enrichment, the dream, knowledge); * counted by Kioku where the model reported none.</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Pass</th><th scope="col" class="num">Runs</th><th scope="col" class="num">Input tokens</th><th scope="col" class="num">Output tokens</th></tr></thead>
<tbody>${shown.map(
      (
        r,
      ) => html`<tr><td data-label="Day">${r.day}</td><td data-label="Pass">${r.pass}</td><td class="num" data-label="Runs">${r.runs}</td>
<td class="num" data-label="Input tokens">${r.inputTokens.toLocaleString('en-US')}${r.estimated ? '*' : ''}</td><td class="num" data-label="Output tokens">${r.outputTokens.toLocaleString('en-US')}${r.estimated ? '*' : ''}</td></tr>`,
    )}</tbody></table>`,
  );
}
