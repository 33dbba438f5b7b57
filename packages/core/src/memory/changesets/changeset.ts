import { z } from 'zod';
import { IdSchema, shortId } from '../../foundation/ids.js';
import { IsoDateSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ModelUsage } from '../../model/chat-model.js';
import { KnowledgeDocumentSchema } from '../../store/documents/record.js';
import { FactSchema } from '../../store/facts/record.js';

/*
 * A changeset is what a memory pass (dream consolidation, preference inference, later extraction and
 * enrichment) proposes before anything is written: every operation with the record it read (`before`,
 * with its version) and the record it wants (`after`), and the model's reason. It can be printed and
 * reviewed (a dry run), applied (`apply.ts`), kept and reverted (`changeset-log.ts`).
 */

/** Why the pass wants an operation, in the model's words (or the pass's own, e.g. the deletion contract). */
export const ReasonSchema = z.string().max(2000);

/**
 * The fact an operation wants: what a `create` writes (with its id chosen in advance, so the changeset
 * names it) or what an `update` makes of `before`. Versions and `updatedAt` are the store's.
 */
export const FactDraftSchema = FactSchema.pick({
  id: true,
  title: true,
  content: true,
  category: true,
  tags: true,
  metadata: true,
  provenance: true,
  eventTime: true,
  createdAt: true,
});

export type FactDraft = z.infer<typeof FactDraftSchema>;

/**
 * The knowledge document a `create_document` writes, with its id chosen in advance. Chunks, token count and
 * `addedAt` are the document store's.
 */
export const DocumentDraftSchema = KnowledgeDocumentSchema.pick({
  id: true,
  title: true,
  description: true,
  tags: true,
  source: true,
  text: true,
  metadata: true,
});

export type DocumentDraft = z.infer<typeof DocumentDraftSchema>;

/**
 * One operation. Facts are created, updated and deleted; a knowledge document is created
 * (`create_document`, which layer-2 consolidation proposes), and reverting it deletes it. Changesets kept
 * before documents existed hold fact operations only and read unchanged.
 */
export const ChangeOperationSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('create'), after: FactDraftSchema, reason: ReasonSchema }),
  z.object({ op: z.literal('update'), before: FactSchema, after: FactDraftSchema, reason: ReasonSchema }),
  z.object({ op: z.literal('delete'), before: FactSchema, reason: ReasonSchema }),
  z.object({ op: z.literal('create_document'), after: DocumentDraftSchema, reason: ReasonSchema }),
]);

export type ChangeOperation = z.infer<typeof ChangeOperationSchema>;

/** An operation on a fact (what the dream, extraction and enrichment propose). */
export type FactOperation = Extract<ChangeOperation, { op: 'create' | 'update' | 'delete' }>;

/** An operation on a knowledge document. */
export type DocumentOperation = Extract<ChangeOperation, { op: 'create_document' }>;

/** The operation kinds, in the order `formatChangeset` counts them. */
export const CHANGE_OPS = Object.freeze(['create', 'update', 'delete', 'create_document'] as const);

/** `proposed` until applied; `partially_applied` when some operations were conflicts; `reverted` after a revert. */
export const ChangesetStatusSchema = z.enum(['proposed', 'applied', 'partially_applied', 'reverted']);
export type ChangesetStatus = z.infer<typeof ChangesetStatusSchema>;

const UsageSchema = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  estimated: z.boolean().optional(),
});

export const ChangesetSchema = z.object({
  id: IdSchema,
  /** The pass that produced it: `consolidation`, `preferences`, … */
  pass: z.string().min(1).max(64),
  userId: IdSchema,
  agentId: IdSchema.optional(),
  createdAt: IsoDateSchema,
  operations: z.array(ChangeOperationSchema),
  /** What the pass spent on model calls. */
  usage: UsageSchema.optional(),
  status: ChangesetStatusSchema,
  /** What the pass ignored or corrected in the model's output (unknown ids, ids of another user, …). */
  notes: z.array(z.string().max(2000)).optional(),
});

export type Changeset = z.infer<typeof ChangesetSchema>;

/** A new `proposed` changeset of `pass` for the scope's user and agent. */
export function newChangeset(
  pass: string,
  scope: Scope,
  operations: ChangeOperation[],
  extra: { createdAt: string; usage?: ModelUsage; notes?: string[] },
): Changeset {
  return {
    id: shortId(),
    pass,
    userId: scope.userId,
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
    createdAt: extra.createdAt,
    operations,
    ...(extra.usage ? { usage: extra.usage } : {}),
    status: 'proposed',
    ...(extra.notes && extra.notes.length > 0 ? { notes: extra.notes } : {}),
  };
}

/** The draft of an existing fact: what `update` starts from. */
export function draftOf(fact: z.infer<typeof FactSchema>): FactDraft {
  const { id, title, content, category, tags, metadata, provenance, eventTime, createdAt } = fact;
  return {
    id,
    ...(title !== undefined ? { title } : {}),
    content,
    category,
    tags,
    metadata,
    provenance,
    ...(eventTime !== undefined ? { eventTime } : {}),
    createdAt,
  };
}

/** Longest content shown per record in `formatChangeset`. */
const SHOWN_CHARS = 600;

/** How many operations of each kind a changeset holds. */
export function countOperations(cs: Pick<Changeset, 'operations'>): Record<ChangeOperation['op'], number> {
  const counts = { create: 0, update: 0, delete: 0, create_document: 0 };
  for (const op of cs.operations) counts[op.op]++;
  return counts;
}

/**
 * A changeset as a reviewer reads it in a dry run: a header, then one block per operation — `+` create,
 * `~` update (only what changes, old `-` / new `+`), `-` delete — each with its reason; notes last.
 */
export function formatChangeset(cs: Changeset): string {
  const counts = countOperations(cs);
  const who = cs.agentId === undefined ? cs.userId : `${cs.userId}/${cs.agentId}`;
  const documents = counts.create_document > 0 ? `, ${counts.create_document} documents to create` : '';
  const lines = [
    `Changeset ${cs.id} (${cs.pass}) for ${who}, ${cs.status}: ${counts.create} to create, ${counts.update} to update, ${counts.delete} to delete${documents}`,
  ];
  if (cs.usage) {
    const estimated = cs.usage.estimated ? ' (estimated)' : '';
    lines.push(
      `  model usage: ${cs.usage.inputTokens} input + ${cs.usage.outputTokens} output tokens${estimated}`,
    );
  }
  for (const op of cs.operations) {
    lines.push('');
    if (op.op === 'create') {
      lines.push(`+ create ${op.after.id} [${op.after.category}]${tagList(op.after.tags)}`);
      lines.push(`    ${shown(op.after.content)}`);
      const metadata = Object.keys(op.after.metadata).length > 0 ? JSON.stringify(op.after.metadata) : '';
      if (metadata) lines.push(`    metadata: ${metadata}`);
      if (op.after.provenance.sourceIds?.length) {
        lines.push(`    merges: ${op.after.provenance.sourceIds.join(', ')} (created ${op.after.createdAt})`);
      }
    } else if (op.op === 'update') {
      lines.push(`~ update ${op.before.id} (version ${op.before.version})`);
      const { before, after } = op;
      if (before.category !== after.category)
        lines.push(`    category: ${before.category} → ${after.category}`);
      if (before.tags.join('\u0000') !== after.tags.join('\u0000')) {
        lines.push(`    tags: [${before.tags.join(', ')}] → [${after.tags.join(', ')}]`);
      }
      if (before.title !== after.title)
        lines.push(`    title: ${before.title ?? '(none)'} → ${after.title ?? '(none)'}`);
      if (before.content !== after.content) {
        lines.push(`    - ${shown(before.content)}`);
        lines.push(`    + ${shown(after.content)}`);
      }
      if (JSON.stringify(before.metadata) !== JSON.stringify(after.metadata)) {
        lines.push(`    metadata: ${JSON.stringify(before.metadata)} → ${JSON.stringify(after.metadata)}`);
      }
    } else if (op.op === 'delete') {
      lines.push(`- delete ${op.before.id} [${op.before.category}]${tagList(op.before.tags)}`);
      lines.push(`    ${shown(op.before.content)}`);
    } else {
      lines.push(`+ document ${op.after.id} "${op.after.title}"${tagList(op.after.tags)}`);
      lines.push(`    ${shown(op.after.text)}`);
      const metadata = Object.keys(op.after.metadata).length > 0 ? JSON.stringify(op.after.metadata) : '';
      if (metadata) lines.push(`    metadata: ${shown(metadata)}`);
    }
    if (op.reason) lines.push(`    reason: ${op.reason}`);
  }
  if (cs.operations.length === 0) lines.push('  (no changes)');
  if (cs.notes?.length) {
    lines.push('', 'Notes:');
    for (const note of cs.notes) lines.push(`  ! ${note}`);
  }
  return lines.join('\n');
}

function tagList(tags: readonly string[]): string {
  return tags.length > 0 ? ` tags: ${tags.join(', ')}` : '';
}

function shown(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= SHOWN_CHARS
    ? flat
    : `${flat.slice(0, SHOWN_CHARS)}… (${flat.length - SHOWN_CHARS} more characters)`;
}
