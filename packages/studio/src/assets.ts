/*
 * Studio's only assets, served from the package itself (`/assets/…`): no CDN, no web font, no build step.
 * The script only enhances pages that work without it (expiry countdowns, a typed confirmation that
 * enables its button, a copy of the print button).
 */

export const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #545d68; --bg: #ffffff; --panel: #f3f5f7;
  --line: #d0d7de; --accent: #0b57d0; --danger: #b3261e; --ok: #146c2e; --warn: #8a5300;
  --base: #6e7781; --tools: #8250df; --free: #e6e9ed; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #a8b3bf; --bg: #0d1117; --panel: #161b22;
  --line: #30363d; --accent: #7cacf8; --danger: #ff8a80; --ok: #7ee2a8; --warn: #f2cc60; --free: #262c36; } }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5; font-size: 16px; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible,
[tabindex]:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; padding: .75rem 1rem;
  border-bottom: 1px solid var(--line); background: var(--panel); }
header.top .brand { font-weight: 700; color: var(--fg); text-decoration: none; font-size: 1.1rem; }
header.top .store { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; border: 1px solid var(--line);
  font-size: .8rem; color: var(--muted); white-space: nowrap; }
.badge.warn { color: var(--warn); border-color: var(--warn); }
.badge.danger { color: var(--danger); border-color: var(--danger); }
.badge.ok { color: var(--ok); border-color: var(--ok); }
nav.sections ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: .5rem 1rem;
  border-bottom: 1px solid var(--line); }
nav.sections a { display: inline-block; padding: .3rem .6rem; border-radius: .4rem; text-decoration: none; }
nav.sections a[aria-current="page"] { background: var(--panel); color: var(--fg); font-weight: 600; }
main { padding: 1rem; max-width: 72rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
.muted { color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .4rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td { overflow-wrap: anywhere; }
pre, .content { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-family: inherit; }
pre.code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; background: var(--panel);
  padding: .75rem; border-radius: .4rem; }
.cols { display: grid; grid-template-columns: 16rem 1fr; gap: 1rem; }
@media (max-width: 760px) { .cols { grid-template-columns: 1fr; } main { padding: .75rem; }
  table.stack thead { display: none; } table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack td { display: block; border: 0; padding: .15rem .25rem; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: var(--muted); } }
.tree ul { list-style: none; padding-left: 1rem; margin: 0; }
.tree > ul { padding-left: 0; }
.card { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: .75rem 0; }
.card h3 { margin-top: 0; }
form.inline { display: inline; }
form.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0 1rem; }
label { font-weight: 600; display: block; }
input[type="text"], input[type="search"], select { font: inherit; padding: .4rem .5rem; border: 1px solid var(--muted);
  border-radius: .35rem; background: var(--bg); color: var(--fg); min-width: 12rem; max-width: 100%; }
button { font: inherit; padding: .4rem .9rem; border-radius: .35rem; border: 1px solid var(--accent);
  background: var(--accent); color: var(--bg); cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--bg); }
button:disabled { opacity: .55; cursor: not-allowed; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; flex-wrap: wrap; }
.notice { border-left: 4px solid var(--accent); background: var(--panel); padding: .5rem .75rem; margin: .75rem 0; }
.notice.danger { border-color: var(--danger); }
.notice.ok { border-color: var(--ok); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.diff del { background: rgba(179, 38, 30, .15); text-decoration: line-through; }
.diff ins { background: rgba(20, 108, 46, .15); text-decoration: none; }
.op-create { border-left: 4px solid var(--ok); }
.op-update { border-left: 4px solid var(--accent); }
.op-delete { border-left: 4px solid var(--danger); }
.op-create_document { border-left: 4px solid var(--ok); }
svg.bar { width: 100%; height: 2.25rem; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; margin: .5rem 0; font-size: .9rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; border-radius: .2rem; vertical-align: -2px; margin-right: .3rem; }
.s0 { fill: var(--base); background: var(--base); } .s1 { fill: var(--tools); background: var(--tools); }
.s2 { fill: #0b57d0; background: #0b57d0; } .s3 { fill: #1a7f37; background: #1a7f37; } .s4 { fill: #bf8700; background: #bf8700; }
.s5 { fill: #cf222e; background: #cf222e; } .s6 { fill: #0a7c86; background: #0a7c86; } .s7 { fill: #8c4c00; background: #8c4c00; }
.sfree { fill: var(--free); background: var(--free); }
`;

export const SCRIPT = `
(function () {
  function left(ms) {
    if (ms <= 0) return 'expired';
    var s = Math.floor(ms / 1000), d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600),
      m = Math.floor(s % 3600 / 60);
    if (d > 0) return 'in ' + d + 'd ' + h + 'h';
    if (h > 0) return 'in ' + h + 'h ' + m + 'm';
    return 'in ' + m + 'm ' + (s % 60) + 's';
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-expires]').forEach(function (el) {
      el.textContent = left(Date.parse(el.getAttribute('data-expires')) - now);
    });
  }
  if (document.querySelector('[data-expires]')) { tick(); setInterval(tick, 1000); }
  document.querySelectorAll('input[data-confirm]').forEach(function (input) {
    var button = input.form && input.form.querySelector('button[type="submit"]');
    if (!button) return;
    var check = function () { button.disabled = input.value !== input.getAttribute('data-confirm'); };
    input.addEventListener('input', check);
    check();
  });
})();
`;
