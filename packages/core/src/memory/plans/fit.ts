import { countMessageTokens } from '../../model/messages.js';
import type { DroppedItem } from '../../runtime/middleware.js';
import type { Plan, PlanStep } from '../../store/plans/record.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { contextNoteLine, fullView, type PlanView, renderPlan, stepLine, stepNotesLine } from './format.js';

export interface FittedPlan {
  /** The block, or undefined when not even the plan's header fits. */
  content: string | undefined;
  dropped: DroppedItem[];
}

interface Cut {
  id: string;
  line: string;
  apply(view: PlanView): void;
}

const finished = (step: PlanStep) => step.status === 'completed' || step.status === 'skipped';

/**
 * What to leave out, least useful first: notes of finished steps; context notes, oldest first; notes
 * of open steps (pending from the last, then blocked, then in progress); finished steps, first first;
 * open steps in the same order as their notes. The goal, id, dates and status are never cut: when they
 * alone do not fit, the whole plan is dropped.
 */
function cutsFor(plan: Plan): Cut[] {
  const notesCut = (step: PlanStep): Cut => ({
    id: `step-${step.id}/notes`,
    line: stepNotesLine(step.notes!),
    apply: (view) => view.hiddenNotes.add(step.id),
  });
  const stepCut = (step: PlanStep): Cut => ({
    id: `step-${step.id}`,
    line: stepLine(step),
    apply: (view) => view.hiddenSteps.add(step.id),
  });
  const lastFirst = [...plan.steps].reverse();
  const open = [
    ...lastFirst.filter((s) => s.status === 'pending'),
    ...lastFirst.filter((s) => s.status === 'blocked'),
    ...lastFirst.filter((s) => s.status === 'in_progress'),
  ];
  return [
    ...plan.steps.filter((s) => finished(s) && s.notes).map(notesCut),
    ...plan.contextNotes.map((note, i) => ({
      id: `context-note-${i + 1}`,
      line: contextNoteLine(note),
      apply: (view: PlanView) => {
        view.hiddenContextNotes = i + 1;
      },
    })),
    ...open.filter((s) => s.notes).map(notesCut),
    ...plan.steps.filter(finished).map(stepCut),
    ...open.map(stepCut),
  ];
}

/**
 * The plan block within `maxTokens`, cutting parts in `cutsFor` order until it fits. Each cut is costed
 * by its line; the message is counted exactly whenever that estimate says it fits, so the limit holds.
 */
export function fitPlan(plan: Plan, tokenizer: Tokenizer, maxTokens: number): FittedPlan {
  const view = fullView();
  const count = () => countMessageTokens(tokenizer, { role: 'system', content: renderPlan(plan, view) });
  const fullTokens = count();
  if (fullTokens <= maxTokens) return { content: renderPlan(plan, view), dropped: [] };
  const dropped: DroppedItem[] = [];
  let estimate = fullTokens;
  for (const cut of cutsFor(plan)) {
    cut.apply(view);
    const tokens = tokenizer.count(cut.line) + 1;
    dropped.push({ id: cut.id, reason: 'budget', tokens });
    estimate -= tokens;
    if (estimate <= maxTokens) {
      estimate = count();
      if (estimate <= maxTokens) return { content: renderPlan(plan, view), dropped };
    }
  }
  if (count() <= maxTokens) return { content: renderPlan(plan, view), dropped };
  return { content: undefined, dropped: [{ id: plan.id, reason: 'budget', tokens: fullTokens }] };
}
