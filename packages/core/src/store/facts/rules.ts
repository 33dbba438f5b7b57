import type { z } from 'zod';
import { NotFoundError } from '../../foundation/errors.js';
import { shortId } from '../../foundation/ids.js';
import type { Scope } from '../../foundation/scope.js';
import { checkVersion } from '../../foundation/version.js';
import type { Fact, FactInputSchema, FactPatchSchema } from './record.js';

/*
 * What a fact becomes on create and update, for every store alike: the stores differ only in how they
 * read and write it (a partition, a row, a compare-and-set), never in what they write.
 */

/**
 * The fact `create` stores: validated input and scope, a generated id and the clock's ISO time (the
 * input's `createdAt` when given), so
 * nothing in it needs validating again. Keys in FactSchema's order, as `FactSchema.parse` returns them.
 */
export function newFact(scope: Scope, data: z.output<typeof FactInputSchema>, now: string): Fact {
  const fact = { id: data.id ?? shortId(), userId: scope.userId } as Fact;
  if (scope.agentId !== undefined) fact.agentId = scope.agentId;
  if (data.title !== undefined) fact.title = data.title;
  fact.content = data.content;
  fact.category = data.category;
  fact.tags = data.tags;
  fact.metadata = data.metadata;
  fact.provenance = data.provenance;
  if (data.eventTime !== undefined) fact.eventTime = new Date(data.eventTime).toISOString();
  // Normalized to UTC, so string order stays time order on every backend.
  fact.createdAt = data.createdAt === undefined ? now : new Date(data.createdAt).toISOString();
  fact.updatedAt = now;
  fact.version = 1;
  return fact;
}

/** What update throws for a fact that is not in the caller's scope. */
export function missingFactError(id: string): NotFoundError {
  return new NotFoundError(`No fact "${id}" in this scope.`, { details: { id } });
}

/**
 * `current` with a validated patch applied: given fields replace, `title: null` removes the title, the
 * version goes up by one. CONFLICT when `expectedVersion` is given and `current` is at another version.
 */
export function patchFact(
  current: Fact,
  changes: z.output<typeof FactPatchSchema>,
  updatedAt: string,
  expectedVersion?: number,
): Fact {
  checkFactVersion(current, expectedVersion);
  const { title, eventTime, ...rest } = changes;
  const next: Fact = { ...current, updatedAt, version: current.version + 1 };
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) (next as Record<string, unknown>)[key] = value;
  }
  if (title === null) delete next.title;
  else if (title !== undefined) next.title = title;
  if (eventTime === null) delete next.eventTime;
  else if (eventTime !== undefined) next.eventTime = new Date(eventTime).toISOString();
  return next;
}

/** CONFLICT when `expectedVersion` is given and differs from the fact's version. */
export function checkFactVersion(
  fact: Pick<Fact, 'id' | 'version'>,
  expectedVersion: number | undefined,
): void {
  checkVersion(`fact "${fact.id}"`, fact.version, expectedVersion);
}
