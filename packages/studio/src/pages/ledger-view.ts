import { type Html, html, plural } from '../html.js';
import type { TurnLedger } from '../kioku.js';

interface Segment {
  label: string;
  tokens: number;
  cls: string;
}

/** The prompt's parts in the order they are paid: base, tool definitions, each memory block. */
function segments(ledger: TurnLedger): Segment[] {
  return [
    { label: 'system prompt + user message', tokens: ledger.baseTokens, cls: 's0' },
    { label: `tool definitions (${ledger.tools.definitions})`, tokens: ledger.tools.tokens, cls: 's1' },
    ...ledger.entries.map((e, i) => ({ label: e.middleware, tokens: e.tokens, cls: `s${2 + (i % 6)}` })),
  ];
}

/**
 * A turn's budget as one bar: each part's width is its share of `maxTokens`, the rest is what was left
 * unused. The numbers are in the legend and the table beside it; the bar only makes them faster to read.
 */
export function ledgerBar(ledger: TurnLedger): Html {
  const parts = segments(ledger);
  const max = Math.max(ledger.maxTokens, ledger.totalTokens, 1);
  let x = 0;
  const rects = parts.map((p) => {
    const w = (p.tokens / max) * 1000;
    const rect = html`<rect class="${p.cls}" x="${x.toFixed(2)}" y="0" width="${w.toFixed(2)}" height="36"><title>${p.label}: ${p.tokens} tokens</title></rect>`;
    x += w;
    return rect;
  });
  const free = Math.max(0, ledger.maxTokens - ledger.totalTokens);
  const summary = `${ledger.totalTokens} of ${ledger.maxTokens} tokens used: ${parts.map((p) => `${p.label} ${p.tokens}`).join(', ')}; ${free} unused.`;
  return html`<svg class="bar" viewBox="0 0 1000 36" preserveAspectRatio="none" role="img" aria-label="${summary}">
<rect class="sfree" x="0" y="0" width="1000" height="36"></rect>${rects}</svg>
<ul class="legend">${parts.map((p) => html`<li><span class="swatch ${p.cls}" aria-hidden="true"></span>${p.label}: ${p.tokens}</li>`)}
<li><span class="swatch sfree" aria-hidden="true"></span>unused: ${free}</li></ul>`;
}

/** Every memory block of the turn: tokens allotted and used, items kept, and what was dropped and why. */
export function ledgerTable(ledger: TurnLedger): Html {
  const r = ledger.recall;
  return html`<p>${ledger.totalTokens} of ${ledger.maxTokens} tokens (${ledger.tokenizer}).
Recall ${r.recall ? 'ran' : 'was skipped'} (${r.mode}, decided by ${r.by}${r.intent ? `, intent ${r.intent}` : ''}): ${r.reason.replace(/\.$/, '')}${r.forcedBy ? html` — then the model called ${r.forcedBy.tool}` : ''}.</p>
<div class="scroll" role="region" aria-label="Memory blocks" tabindex="0"><table class="stack">
<thead><tr><th scope="col">Block</th><th scope="col" class="num">Allotted</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Included</th><th scope="col">Dropped</th><th scope="col">Notes</th></tr></thead>
<tbody>${ledger.entries.map(
    (e) => html`<tr><th scope="row" data-label="Block">${e.middleware}</th>
<td class="num" data-label="Allotted">${e.allottedTokens}</td><td class="num" data-label="Tokens">${e.tokens}</td><td class="num" data-label="Included">${e.included}</td>
<td data-label="Dropped">${
      e.dropped.length === 0
        ? '—'
        : html`<ul>${e.dropped.map(
            (d) =>
              html`<li>${d.count ? plural(d.count, 'item') : d.id} — <strong>${d.reason}</strong>${d.tokens !== undefined ? ` (${d.tokens} tokens)` : ''}</li>`,
          )}</ul>`
    }</td>
<td data-label="Notes">${e.notes?.length ? e.notes.join('; ') : '—'}</td></tr>`,
  )}</tbody></table></div>`;
}
