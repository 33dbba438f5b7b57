import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { IsoDateSchema, OptionalAgentIdSchema } from '../../foundation/record-fields.js';
import { RecordVersionSchema } from '../../foundation/version.js';

export const PLAN_LIMITS = Object.freeze({
  steps: 100,
  stepChars: 2_000,
  notesChars: 4_000,
  goalChars: 2_000,
  contextNotes: 200,
});

export const PlanStepStatusSchema = z.enum(['pending', 'in_progress', 'completed', 'blocked', 'skipped']);
export type PlanStepStatus = z.infer<typeof PlanStepStatusSchema>;

const StepDescriptionSchema = z.string().trim().min(1).max(PLAN_LIMITS.stepChars);
const NotesSchema = z.string().max(PLAN_LIMITS.notesChars);

export const PlanStepSchema = z.object({
  /** "1", "2", … in creation order; ids are never reused within a plan. */
  id: z.string().regex(/^[0-9]{1,4}$/, 'must be a step number such as "1"'),
  description: StepDescriptionSchema,
  status: PlanStepStatusSchema,
  notes: NotesSchema.optional(),
  updatedAt: IsoDateSchema,
});

export type PlanStep = z.infer<typeof PlanStepSchema>;

export const ContextNoteSchema = z.object({
  at: IsoDateSchema,
  text: z.string().min(1).max(PLAN_LIMITS.notesChars),
});
export type ContextNote = z.infer<typeof ContextNoteSchema>;

/** The plan of one conversation. */
export const PlanSchema = z.object({
  id: IdSchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  threadId: IdSchema,
  goal: z.string().trim().min(1).max(PLAN_LIMITS.goalChars),
  steps: z.array(PlanStepSchema).max(PLAN_LIMITS.steps),
  contextNotes: z.array(ContextNoteSchema).max(PLAN_LIMITS.contextNotes),
  isComplete: z.boolean(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
  completedAt: IsoDateSchema.optional(),
  /** 1 when created, one more on every edit (see `records/version.ts`). */
  version: RecordVersionSchema,
});

export type Plan = z.infer<typeof PlanSchema>;

export const PlanInputSchema = z.object({
  goal: z.string().trim().min(1).max(PLAN_LIMITS.goalChars),
  steps: z.array(StepDescriptionSchema).max(PLAN_LIMITS.steps).default([]),
});

export type PlanInput = z.input<typeof PlanInputSchema>;

export const StepUpdateSchema = z
  .object({ status: PlanStepStatusSchema.optional(), notes: NotesSchema.optional() })
  .strict()
  .refine((u) => u.status !== undefined || u.notes !== undefined, {
    message: 'give a status, notes or both',
  });

export type StepUpdate = z.input<typeof StepUpdateSchema>;

export const NewStepSchema = z.object({
  description: StepDescriptionSchema,
  /** Insert after this step; at the end when absent. */
  afterStepId: z.string().max(8).optional(),
});

export type NewStep = z.input<typeof NewStepSchema>;
