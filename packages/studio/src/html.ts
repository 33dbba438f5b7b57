import { html, raw } from 'hono/html';
import type { Scope } from './kioku.js';

/** A piece of escaped HTML (hono's `html` tag escapes every interpolated value). */
export type Html = ReturnType<typeof html>;
export { html, raw };

/** What every page knows about the request. */
export interface Page {
  /** The form token every POST must carry (see `security.ts`). */
  csrf: string;
  readOnly: boolean;
  /** The store, as the command line named it (credentials removed). */
  storeLabel: string;
}

/** The sections of a user's pages, in navigation order. */
export const SECTIONS = [
  ['', 'Overview'],
  ['/facts', 'Facts'],
  ['/documents', 'Documents'],
  ['/sessions', 'Sessions'],
  ['/plans', 'Plans'],
  ['/working', 'Working memory'],
  ['/details', 'Offloaded details'],
  ['/search', 'Search'],
  ['/review', 'Review'],
  ['/quarantine', 'Quarantine'],
  ['/privacy', 'Privacy'],
] as const;

export type Section = (typeof SECTIONS)[number][0];

/** `/users/alice/facts?agent=x&page=2`: every link of a user's pages carries the agent. */
export function userPath(
  scope: Scope,
  sub = '',
  params: Record<string, string | number | undefined> = {},
): string {
  const query = new URLSearchParams();
  if (scope.agentId !== undefined) query.set('agent', scope.agentId);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') query.set(k, String(v));
  const q = query.toString();
  return `/users/${encodeURIComponent(scope.userId)}${sub}${q ? `?${q}` : ''}`;
}

export function who(scope: Scope): string {
  return scope.agentId === undefined ? scope.userId : `${scope.userId} / ${scope.agentId}`;
}

export function layout(
  page: Page,
  options: { title: string; scope?: Scope; section?: Section },
  body: Html | Html[],
): Html {
  const { title, scope, section } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Kioku Studio</title>
<link rel="stylesheet" href="/assets/studio.css">
<script src="/assets/studio.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">Kioku Studio</a>
  <span class="store">${page.storeLabel}</span>
  ${page.readOnly ? html`<span class="badge warn">read-only</span>` : ''}
  ${scope ? html`<span class="badge">user ${who(scope)}</span>` : ''}
</header>
${scope ? nav(scope, section ?? '') : ''}
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

function nav(scope: Scope, current: Section): Html {
  return html`<nav class="sections" aria-label="Sections of ${who(scope)}"><ul>${SECTIONS.map(
    ([sub, label]) =>
      html`<li><a href="${userPath(scope, sub)}"${sub === current ? raw(' aria-current="page"') : ''}>${label}</a></li>`,
  )}</ul></nav>`;
}

/** A POST form with the CSRF token; nothing at all in read-only mode (the server refuses the POST too). */
export function postForm(
  page: Page,
  action: string,
  button: Html | string,
  options: { danger?: boolean; fields?: Html; label?: string } = {},
): Html {
  if (page.readOnly) return html``;
  const cls = options.danger ? 'danger' : '';
  return html`<form class="inline" method="post" action="${action}">
<input type="hidden" name="csrf" value="${page.csrf}">${options.fields ?? ''}
<button type="submit" class="${cls}"${options.label ? raw(` aria-label="${escapeAttr(options.label)}"`) : ''}>${button}</button>
</form>`;
}

function escapeAttr(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** "Page 2 of 40" with previous / next links. */
export function pager(page: number, pages: number, href: (page: number) => string, label: string): Html {
  if (pages <= 1) return html``;
  return html`<nav class="pager" aria-label="${label} pages">
${page > 1 ? html`<a href="${href(page - 1)}" rel="prev">← Previous</a>` : ''}
<span>Page ${page} of ${pages}</span>
${page < pages ? html`<a href="${href(page + 1)}" rel="next">Next →</a>` : ''}
</nav>`;
}

/** A wide table that scrolls on a narrow screen, reachable by keyboard. */
export function scrollTable(label: string, table: Html): Html {
  return html`<div class="scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

/** An ISO time as a `<time>` element, shown in UTC to the minute. */
export function when(iso: string | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')}</time>`;
}

/** `1 fact`, `2 facts`. */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Page number from a query value: 1 for anything that is not a positive integer. */
export function pageNumber(value: string | undefined): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

export function notice(text: Html | string, kind: 'info' | 'ok' | 'danger' = 'info'): Html {
  return html`<div class="notice ${kind === 'info' ? '' : kind}" role="status">${text}</div>`;
}
