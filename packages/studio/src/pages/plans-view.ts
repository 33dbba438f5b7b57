import { type Html, html, when } from '../html.js';
import type { Plan } from '../kioku.js';

const STATUS_BADGE: Record<string, string> = {
  pending: '',
  in_progress: 'warn',
  completed: 'ok',
  blocked: 'danger',
  skipped: '',
};

/** A plan with its steps' states and notes. */
export function planView(plan: Plan): Html {
  return html`<div class="card">
<h3>${plan.goal}</h3>
<p class="muted">${plan.isComplete ? html`<span class="badge ok">complete</span> ` : ''}version ${plan.version}, updated ${when(plan.updatedAt)}</p>
<ol>${plan.steps.map(
    (s) =>
      html`<li><span class="badge ${STATUS_BADGE[s.status] ?? ''}">${s.status.replace('_', ' ')}</span> ${s.description}${s.notes ? html`<br><span class="muted">${s.notes}</span>` : ''}</li>`,
  )}</ol>
${plan.contextNotes.length ? html`<details><summary>${plan.contextNotes.length} context notes</summary><ul>${plan.contextNotes.map((n) => html`<li>${when(n.at)} ${n.text}</li>`)}</ul></details>` : ''}
</div>`;
}
