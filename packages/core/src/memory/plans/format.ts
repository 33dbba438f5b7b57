import type { Plan, PlanStepStatus } from '../../store/plans/record.js';

export const PLAN_START = '[CURRENT_PLAN]';
export const PLAN_END = '[END_CURRENT_PLAN]';

/**
 * Marker and label per step status: ● Completed, ◐ InProgress, ○ Pending; core's plans also
 * know `blocked` (⊘, "no entry": waiting on something) and `skipped` (⊖, "struck out": deliberately
 * not done), labelled in PascalCase.
 */
export const STEP_STATUS_DISPLAY: Readonly<Record<PlanStepStatus, { marker: string; label: string }>> =
  Object.freeze({
    pending: { marker: '○', label: 'Pending' },
    in_progress: { marker: '◐', label: 'InProgress' },
    completed: { marker: '●', label: 'Completed' },
    blocked: { marker: '⊘', label: 'Blocked' },
    skipped: { marker: '⊖', label: 'Skipped' },
  });

/** What of a plan is shown; the full plan unless the budget forced parts out (see fit.ts). */
export interface PlanView {
  /** Steps whose notes are left out. */
  hiddenNotes: Set<string>;
  /** Steps left out entirely. */
  hiddenSteps: Set<string>;
  /** How many of the oldest context notes are left out. */
  hiddenContextNotes: number;
}

export function fullView(): PlanView {
  return { hiddenNotes: new Set(), hiddenSteps: new Set(), hiddenContextNotes: 0 };
}

/** `2025-01-15 10:00:00`, in UTC. */
export function formatDateTime(iso: string): string {
  return new Date(iso).toISOString().slice(0, 19).replace('T', ' ');
}

/** `10:32:15`, in UTC. */
export function formatTime(iso: string): string {
  return new Date(iso).toISOString().slice(11, 19);
}

export function stepLine(step: Plan['steps'][number]): string {
  const { marker, label } = STEP_STATUS_DISPLAY[step.status];
  return `  ${marker} [${step.id}] ${step.description} (${label})`;
}

export function stepNotesLine(notes: string): string {
  return `      Notes: ${notes}`;
}

export function contextNoteLine(note: Plan['contextNotes'][number]): string {
  return `  • [${formatTime(note.at)}] ${note.text}`;
}

/**
 * The plan block, with its blank lines between sections. Empty sections (no steps, no context
 * notes) are left out; parts hidden by the view are announced in one line so the model knows they exist.
 */
export function renderPlan(plan: Plan, view: PlanView = fullView()): string {
  const lines = [
    PLAN_START,
    `Goal: ${plan.goal}`,
    `Plan ID: ${plan.id}`,
    `Created: ${formatDateTime(plan.createdAt)}`,
    `Status: ${plan.isComplete ? 'Completed' : 'In Progress'}`,
  ];
  if (plan.steps.length > 0) {
    lines.push('', 'Steps:');
    for (const step of plan.steps) {
      if (view.hiddenSteps.has(step.id)) continue;
      lines.push(stepLine(step));
      if (step.notes && !view.hiddenNotes.has(step.id)) lines.push(stepNotesLine(step.notes));
    }
    const hidden = view.hiddenSteps.size;
    if (hidden > 0) lines.push(`  … ${hidden} ${hidden === 1 ? 'step' : 'steps'} not shown`);
  }
  if (plan.contextNotes.length > 0) {
    lines.push('', 'Context Notes:');
    const hidden = view.hiddenContextNotes;
    if (hidden > 0) lines.push(`  … ${hidden} older ${hidden === 1 ? 'note' : 'notes'} not shown`);
    for (const note of plan.contextNotes.slice(hidden)) lines.push(contextNoteLine(note));
  }
  lines.push('', PLAN_END);
  return lines.join('\n');
}
