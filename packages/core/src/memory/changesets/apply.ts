import { z } from 'zod';
import { isKiokuError, type KiokuError, StorageError, ValidationError } from '../../foundation/errors.js';
import { sameJson } from '../../foundation/objects.js';
import type { Scope } from '../../foundation/scope.js';
import { KnowledgeDocumentSchema } from '../../store/documents/record.js';
import type { DocumentStore } from '../../store/documents/store.js';
import { type Fact, FactSchema } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { factText, markUntrusted } from '../trust/quarantine.js';
import { CHANGE_OPS, type ChangeOperation, type Changeset, type FactDraft } from './changeset.js';

/** An operation as it was written: `after` is the record as the store returned it (a fact's new version). */
export const AppliedOperationSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('create'), after: FactSchema }),
  z.object({ op: z.literal('update'), before: FactSchema, after: FactSchema }),
  z.object({ op: z.literal('delete'), before: FactSchema }),
  z.object({ op: z.literal('create_document'), after: KnowledgeDocumentSchema }),
]);

export type AppliedOperation = z.infer<typeof AppliedOperationSchema>;

/** An operation that was not written, and why (`CONFLICT`: the record changed since it was read). */
export const ChangeConflictSchema = z.object({
  /** Index of the operation in the changeset (or in `applied`, for a revert). */
  index: z.number().int().min(0),
  op: z.enum(CHANGE_OPS),
  id: z.string(),
  code: z.string(),
  message: z.string(),
});

export type ChangeConflict = z.infer<typeof ChangeConflictSchema>;

export interface ApplyResult {
  applied: AppliedOperation[];
  conflicts: ChangeConflict[];
}

/**
 * The stores a changeset writes to: facts, and the knowledge documents its `create_document` operations
 * create. A bare `FactStore` is accepted where a changeset holds fact operations only.
 */
export interface ChangeStores {
  facts: FactStore;
  documents?: DocumentStore;
}

function storesOf(target: FactStore | ChangeStores): ChangeStores {
  return 'facts' in target ? target : { facts: target };
}

/** The document store, or VALIDATION before anything is written when the operations need one and there is none. */
function documentsFor(stores: ChangeStores, ops: readonly { op: string }[]): DocumentStore | undefined {
  if (stores.documents || !ops.some((op) => op.op === 'create_document')) return stores.documents;
  throw new ValidationError(
    'The changeset creates knowledge documents: pass the document store too ({ facts, documents }).',
  );
}

/**
 * The Kioku error an operation met (a conflict, a record gone, invalid input). A backend that failed (a
 * `StorageError`) or an error that is not Kioku's says nothing about the operation: it is thrown.
 */
function operationError(error: unknown): KiokuError {
  if (!isKiokuError(error) || error instanceof StorageError) throw error;
  return error;
}

/**
 * Write a changeset's operations in order. Updates and deletes pass the version of the record the pass
 * read (`before.version`) as `expectedVersion`, so a record changed since (the user's edit, the model's
 * own `update_memory`) is reported as a conflict and left as it is; a record gone since is reported too
 * (`NOT_FOUND`). A created fact or document whose id is taken is a conflict as well. The other operations
 * still apply — except within a merge (a `create` naming its `sourceIds` and the source operations): a
 * merge whose source changed is left whole (every operation of it a CONFLICT, nothing written), and one
 * whose source changes while it is applied is undone, so the merged fact never stands beside an edited
 * source. A backend that failed (a `StorageError`: unreachable, restarting) or an error that is not Kioku's
 * is thrown, never kept as a conflict: the changeset stays to be applied again (recorded as a conflict, its
 * facts would never be written).
 */
export async function applyChangeset(
  target: FactStore | ChangeStores,
  scope: Scope,
  cs: Changeset,
): Promise<ApplyResult> {
  const stores = storesOf(target);
  const documents = documentsFor(stores, cs.operations);
  const applied: AppliedOperation[] = [];
  const conflicts: ChangeConflict[] = [];
  const merges = mergeGroups(cs.operations);
  // A merge is applied whole or not at all: a source changed since the pass read it holds the group back.
  const held = new Map<number, string>();
  for (const group of merges) {
    const changed = await changedSource(stores.facts, scope, cs.operations, group);
    if (changed) for (const i of group) held.set(i, changed);
  }
  const groupOf = new Map(merges.flatMap((group) => group.map((i) => [i, group] as const)));
  const doneInGroup = new Map<readonly number[], AppliedOperation[]>();
  for (const [index, op] of cs.operations.entries()) {
    const reason = held.get(index);
    if (reason !== undefined) {
      conflicts.push(heldBack(index, op, reason));
      continue;
    }
    const group = groupOf.get(index);
    let failed: ChangeConflict | undefined;
    try {
      const done = await applyOne(stores.facts, documents, scope, op);
      if (done) {
        applied.push(done);
        if (group) doneInGroup.set(group, [...(doneInGroup.get(group) ?? []), done]);
      } else failed = gone(index, op.op, idOf(op));
    } catch (error) {
      const { code, message } = operationError(error);
      failed = { index, op: op.op, id: idOf(op), code, message };
    }
    if (!failed) continue;
    conflicts.push(failed);
    if (!group) continue;
    // A source changed while the merge was being applied: undo what it wrote, hold back the rest.
    const undo = doneInGroup.get(group) ?? [];
    const undone = await revertChangeset(stores, scope, undo);
    for (const op of undo) if (undone.reverted.includes(op)) applied.splice(applied.indexOf(op), 1);
    const why = `${idOf(cs.operations[index]!)} changed while the merge was applied`;
    for (const i of group) {
      if (i === index) continue;
      held.set(i, why);
      if (i < index) conflicts.push(heldBack(i, cs.operations[i]!, why));
    }
  }
  conflicts.sort((x, y) => x.index - y.index);
  return { applied, conflicts };
}

/**
 * The merges of a changeset, as groups of operation indexes: a `create` whose provenance names its
 * sources (`sourceIds`) and the updates and deletes of those sources in the same changeset.
 */
function mergeGroups(ops: readonly ChangeOperation[]): number[][] {
  const groups: number[][] = [];
  for (const [i, op] of ops.entries()) {
    const sources = op.op === 'create' ? op.after.provenance.sourceIds : undefined;
    if (!sources || sources.length === 0) continue;
    const members = ops.flatMap((other, j) =>
      (other.op === 'update' || other.op === 'delete') && sources.includes(other.before.id) ? [j] : [],
    );
    if (members.length > 0) groups.push([i, ...members]);
  }
  return groups;
}

/** Why a merge is held back: its first source that is gone or at another version than the pass read. */
async function changedSource(
  facts: FactStore,
  scope: Scope,
  ops: readonly ChangeOperation[],
  group: readonly number[],
): Promise<string | undefined> {
  for (const i of group) {
    const op = ops[i]!;
    if (op.op !== 'update' && op.op !== 'delete') continue;
    const current = await facts.get(scope, op.before.id);
    if (!current) return `${op.before.id} is gone`;
    if (current.version !== op.before.version) {
      return `${op.before.id} changed (version ${op.before.version} read, ${current.version} now)`;
    }
  }
  return undefined;
}

function heldBack(index: number, op: ChangeOperation, reason: string): ChangeConflict {
  return {
    index,
    op: op.op,
    id: idOf(op),
    code: 'CONFLICT',
    message: `Part of a merge whose source ${reason} since the pass read it: the merge is left whole for review, nothing of it written (run the pass again to propose it over the current facts).`,
  };
}

async function applyOne(
  facts: FactStore,
  documents: DocumentStore | undefined,
  scope: Scope,
  op: ChangeOperation,
): Promise<AppliedOperation | null> {
  switch (op.op) {
    case 'create':
      return { op: 'create', after: await facts.create(scope, inputOf(guarded(op.after))) };
    case 'update': {
      const after = await facts.update(scope, op.before.id, patchTo(guarded(op.after, op.before)), {
        expectedVersion: op.before.version,
      });
      return { op: 'update', before: op.before, after };
    }
    case 'delete': {
      const deleted = await facts.delete(scope, op.before.id, { expectedVersion: op.before.version });
      return deleted ? { op: 'delete', before: op.before } : null;
    }
    case 'create_document':
      return { op: 'create_document', after: await documents!.create(scope, op.after) };
  }
}

export interface RevertResult {
  /**
   * The operations now undone, last applied first: undone by this revert, or found already undone (the
   * record is as it was before the apply, e.g. another instance reverted it at the same time).
   */
  reverted: AppliedOperation[];
  conflicts: ChangeConflict[];
}

/**
 * Undo applied operations, last first, restoring the exact prior records: a created fact is deleted, an
 * updated one gets back its title, content, category, tags, metadata and provenance, a deleted one is
 * created again with its id and `createdAt`, a created document is deleted. Each fact write expects the
 * version the apply left, so a fact changed since the apply is a conflict (reported, not overwritten);
 * documents have no versions, so a document is deleted only while it is the one the apply created (same
 * text, title and `addedAt`). The rest is still undone. An operation whose record is already as it was
 * before the apply counts as undone, so two reverts of one changeset at once (two app instances) agree on
 * what is left, and neither undoes anything twice.
 */
export async function revertChangeset(
  target: FactStore | ChangeStores,
  scope: Scope,
  applied: readonly AppliedOperation[],
): Promise<RevertResult> {
  const stores = storesOf(target);
  const documents = documentsFor(stores, applied);
  const { facts } = stores;
  const reverted: AppliedOperation[] = [];
  const conflicts: ChangeConflict[] = [];
  for (let index = applied.length - 1; index >= 0; index--) {
    const op = applied[index]!;
    const id = op.op === 'delete' ? op.before.id : op.after.id;
    try {
      if (op.op === 'create') {
        // Gone already: the state before the apply, whoever deleted it.
        await facts.delete(scope, op.after.id, { expectedVersion: op.after.version });
      } else if (op.op === 'update') {
        await facts.update(scope, op.after.id, patchTo(op.before), { expectedVersion: op.after.version });
      } else if (op.op === 'delete') {
        await facts.create(scope, inputOf(op.before));
      } else {
        const current = await documents!.get(scope, op.after.id);
        if (current && !sameDocument(current, op.after)) {
          conflicts.push({
            index,
            op: op.op,
            id,
            code: 'CONFLICT',
            message: `The document "${id}" was replaced since the changeset created it; it is left as it is.`,
          });
          continue;
        }
        if (current) await documents!.delete(scope, op.after.id);
      }
      reverted.push(op);
    } catch (error) {
      const { code, message } = operationError(error);
      if (code === 'CONFLICT' && (await isUndone(facts, scope, op))) reverted.push(op);
      else conflicts.push({ index, op: op.op, id, code, message });
    }
  }
  return { reverted, conflicts };
}

type DocumentFields = Pick<z.infer<typeof KnowledgeDocumentSchema>, 'title' | 'text' | 'addedAt'>;

function sameDocument(a: DocumentFields, b: DocumentFields): boolean {
  return a.title === b.title && a.text === b.text && a.addedAt === b.addedAt;
}

/** True when the operation's fact is as it was before the apply (an update's fields, a deletion's record). */
async function isUndone(facts: FactStore, scope: Scope, op: AppliedOperation): Promise<boolean> {
  if (op.op === 'create_document') return false;
  if (op.op === 'create') return (await facts.get(scope, op.after.id)) === null;
  const current = await facts.get(scope, op.before.id);
  if (!current) return false;
  if (op.op === 'update') return sameJson(patchTo(current), patchTo(op.before));
  return sameJson(inputOf(current), inputOf(op.before));
}

/** What `create` needs to write `draft` exactly (id and `createdAt` included). */
function inputOf(draft: FactDraft | Fact) {
  return {
    id: draft.id,
    ...(draft.title !== undefined ? { title: draft.title } : {}),
    content: draft.content,
    category: draft.category,
    tags: draft.tags,
    metadata: draft.metadata,
    provenance: draft.provenance,
    ...(draft.eventTime !== undefined ? { eventTime: draft.eventTime } : {}),
    createdAt: draft.createdAt,
  };
}

/**
 * What a pass may write: text that reads like instructions goes in quarantine (`markUntrusted`), and an
 * update never lifts the quarantine of the fact it changes — only the user does (`confirmQuarantined`).
 */
function guarded(after: FactDraft, before?: Fact): FactDraft {
  const kept = before?.provenance.quarantine;
  // Extraction decided already, knowing which words the user typed (`extractFacts`).
  const provenance = kept
    ? { ...after.provenance, quarantine: kept }
    : after.provenance.source === 'extraction'
      ? after.provenance
      : markUntrusted(after.provenance, factText(after));
  return provenance === after.provenance ? after : { ...after, provenance };
}

/**
 * The patch that makes a fact equal to `target` in every field a patch can set (no title or event time
 * removes it).
 */
function patchTo(target: FactDraft | Fact) {
  return {
    title: target.title ?? null,
    content: target.content,
    category: target.category,
    tags: target.tags,
    metadata: target.metadata,
    provenance: target.provenance,
    eventTime: target.eventTime ?? null,
  };
}

function idOf(op: ChangeOperation): string {
  return op.op === 'delete' || op.op === 'update' ? op.before.id : op.after.id;
}

function gone(index: number, op: ChangeOperation['op'], id: string): ChangeConflict {
  return { index, op, id, code: 'NOT_FOUND', message: `The fact "${id}" no longer exists.` };
}
