import type { StoreKind } from '@kioku/core';
import {
  DetailRecordSchema,
  FactSchema,
  type HybridKind,
  KnowledgeDocumentSchema,
  PlanSchema,
  SessionRecordSchema,
  WorkingEntrySchema,
} from '@kioku/core/store';
import type { z } from 'zod';
import { UsageError } from './errors.js';

/** Every store kind, in the order the commands copy them. */
export const KINDS = [
  'facts',
  'documents',
  'plans',
  'working',
  'sessions',
  'details',
] as const satisfies readonly StoreKind[];

export type Kind = (typeof KINDS)[number];

/**
 * The kinds of vectors hybrid recall keeps (core's `HybridKind`), in the order `kioku reembed` rebuilds
 * them; `transcript` vectors are made from the sessions store.
 */
export const VECTOR_KINDS = [
  'facts',
  'documents',
  'details',
  'transcript',
] as const satisfies readonly HybridKind[];

export type VectorKind = (typeof VECTOR_KINDS)[number];

/** The zod schema of one record of each kind, as snapshots carry them (core's, so validation is the stores'). */
export const RECORD_SCHEMAS: { [K in Kind]: z.ZodType<unknown> } = {
  facts: FactSchema,
  documents: KnowledgeDocumentSchema,
  plans: PlanSchema,
  working: WorkingEntrySchema,
  sessions: SessionRecordSchema,
  details: DetailRecordSchema,
};

export function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

/** The user a snapshot record belongs to (sessions carry it in their session info). */
export function recordUserId(kind: Kind, record: unknown): string {
  const r = record as { userId?: string; session?: { userId?: string } };
  return (kind === 'sessions' ? r.session?.userId : r.userId) ?? '';
}

/** `--kinds facts,documents` → those of `all`, in the order of `all`; every one when absent. */
function parseKindList<K extends string>(value: string | undefined, all: readonly K[]): K[] {
  if (value === undefined) return [...all];
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0) throw new UsageError(`--kinds needs at least one of: ${all.join(', ')}.`);
  const unknown = names.filter((n) => !(all as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new UsageError(
      `Unknown kind${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')} in --kinds; choose from ${all.join(', ')}.`,
    );
  }
  return all.filter((k) => names.includes(k));
}

/** `--kinds` of migrate, export and import: store kinds in copy order, every kind when absent. */
export function parseKinds(value: string | undefined): Kind[] {
  return parseKindList(value, KINDS);
}

/** `--kinds` of reembed: vector kinds, all four when absent. */
export function parseVectorKinds(value: string | undefined): VectorKind[] {
  return parseKindList(value, VECTOR_KINDS);
}
