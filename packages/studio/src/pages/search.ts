import type { Hono } from 'hono';
import { render, type Studio, scopeOf } from '../context.js';
import { type Html, html, scrollTable, truncate, userPath } from '../html.js';
import {
  englishAnalyzer,
  type Fact,
  factSearchText,
  HybridFactStore,
  isQuarantined,
  type Scope,
} from '../kioku.js';
import { factBadges } from './facts.js';

const LIMIT = 20;

interface Explained {
  fact: Fact;
  score: number;
  matched: string[];
  lexicalRank?: number;
  vectorRank?: number;
  similarity?: number;
}

/** The query's analysed terms that a fact's searchable text holds (what BM25 scored it on). */
function matchedTerms(queryTerms: string[], fact: Fact): string[] {
  const terms = new Set(englishAnalyzer.terms(factSearchText(fact)));
  return [...new Set(queryTerms)].filter((t) => terms.has(t));
}

/**
 * The user's facts for a query, ranked exactly as the agent's search ranks them (`facts.search`, hybrid
 * when the store has vectors), each with its score and matched terms; with vectors, also each side's rank
 * before fusion.
 */
async function explainFacts(
  studio: Studio,
  scope: Scope,
  query: string,
): Promise<{ hits: Explained[]; hybrid: boolean }> {
  const facts = studio.stores.facts;
  const hits = await facts.search(scope, { query, limit: LIMIT });
  const queryTerms = englishAnalyzer.terms(query);
  const explained: Explained[] = hits.map((h) => ({
    fact: h.fact,
    score: h.score,
    matched: matchedTerms(queryTerms, h.fact),
  }));
  if (!(facts instanceof HybridFactStore)) return { hits: explained, hybrid: false };
  const pool = facts.vectors.candidates(LIMIT);
  const base =
    scope.agentId === undefined ? { userId: scope.userId } : { userId: scope.userId, agentId: scope.agentId };
  const [lexical, nearest] = await Promise.all([
    facts.store.search(scope, { query, limit: pool }),
    facts.vectors.search(base, query, pool),
  ]);
  const lexicalRank = new Map(lexical.map((h, i) => [h.fact.id, i + 1]));
  const vectorRank = new Map<string, { rank: number; score: number }>();
  for (const [i, hit] of nearest.entries()) {
    const factId = hit.payload.id;
    if (typeof factId === 'string' && !vectorRank.has(factId))
      vectorRank.set(factId, { rank: i + 1, score: hit.score });
  }
  for (const e of explained) {
    const l = lexicalRank.get(e.fact.id);
    const v = vectorRank.get(e.fact.id);
    if (l !== undefined) e.lexicalRank = l;
    if (v !== undefined) {
      e.vectorRank = v.rank;
      e.similarity = v.score;
    }
  }
  return { hits: explained, hybrid: true };
}

function rankCell(rank: number | undefined, extra?: string): Html | string {
  return rank === undefined
    ? html`<span class="muted">not in its top results</span>`
    : `#${rank}${extra ?? ''}`;
}

/** `/users/:user/search`: facts and document chunks for a query, with why each ranks where it does. */
export function registerSearch(app: Hono, studio: Studio): void {
  app.get('/users/:user/search', async (c) => {
    const scope = scopeOf(c);
    const query = (c.req.query('q') ?? '').trim().slice(0, 2000);
    const form = html`<form class="row" method="get" action="${userPath(scope, '/search')}" role="search">
${scope.agentId ? html`<input type="hidden" name="agent" value="${scope.agentId}">` : ''}
<div><label for="q">Search ${scope.userId}'s memory</label><input id="q" name="q" type="search" value="${query}" required></div>
<button type="submit">Search</button></form>`;
    if (!query) {
      return render(c, studio, { title: 'Search', scope, section: '/search' }, form);
    }
    const [{ hits, hybrid }, chunks] = await Promise.all([
      explainFacts(studio, scope, query),
      studio.stores.documents.search(scope, { query, limit: 10 }),
    ]);
    const body = html`${form}
<p>Query terms after analysis (stop words dropped, stemmed): ${englishAnalyzer.terms(query).map((t) => html`<code>${t}</code> `)}</p>
<h2>Facts</h2>
<p class="muted">Ranked as the agent's memory search ranks them${hybrid ? ': lexical (BM25) and vector results fused by reciprocal rank, so the score is the fused one' : ' (BM25)'}. Quarantined facts are ranked here but never shown to the agent.</p>
${
  hits.length === 0
    ? html`<p>No fact matches.</p>`
    : scrollTable(
        'Fact results',
        html`<table class="stack"><thead><tr><th scope="col" class="num">Rank</th><th scope="col" class="num">Score</th><th scope="col">Fact</th><th scope="col">Matched terms</th>${hybrid ? html`<th scope="col">Lexical rank</th><th scope="col">Vector rank</th>` : ''}</tr></thead>
<tbody>${hits.map(
          (
            h,
            i,
          ) => html`<tr${isQuarantined(h.fact) ? html` class="muted"` : ''}><td class="num" data-label="Rank">${i + 1}</td><td class="num" data-label="Score">${h.score.toFixed(4)}</td>
<td data-label="Fact"><a href="${userPath(scope, `/facts/${encodeURIComponent(h.fact.id)}`)}">${h.fact.id}</a> ${factBadges(h.fact)}<br><span class="content">${truncate(h.fact.content, 300)}</span></td>
<td data-label="Matched terms">${h.matched.length ? h.matched.map((t) => html`<code>${t}</code> `) : html`<span class="muted">none (vector match)</span>`}</td>
${hybrid ? html`<td data-label="Lexical rank">${rankCell(h.lexicalRank)}</td><td data-label="Vector rank">${rankCell(h.vectorRank, h.similarity === undefined ? '' : ` (cosine ${h.similarity.toFixed(3)})`)}</td>` : ''}</tr>`,
        )}</tbody></table>`,
      )
}
<h2>Document chunks</h2>
${
  chunks.length === 0
    ? html`<p>No document matches.</p>`
    : scrollTable(
        'Document results',
        html`<table class="stack"><thead><tr><th scope="col" class="num">Rank</th><th scope="col" class="num">Score</th><th scope="col">Document</th><th scope="col">Chunk</th></tr></thead>
<tbody>${chunks.map(
          (
            h,
            i,
          ) => html`<tr><td class="num" data-label="Rank">${i + 1}</td><td class="num" data-label="Score">${h.score.toFixed(4)}</td>
<td data-label="Document"><a href="${userPath(scope, `/documents/${encodeURIComponent(h.documentId)}`)}">${h.title}</a></td><td data-label="Chunk"><span class="content">${truncate(h.chunk.text, 400)}</span></td></tr>`,
        )}</tbody></table>`,
      )
}`;
    return render(c, studio, { title: `Search: ${query}`, scope, section: '/search' }, body);
  });
}
