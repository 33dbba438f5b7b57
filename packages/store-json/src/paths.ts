import path from 'node:path';
import { type StoreKind, ValidationError } from '@kioku/core';
import { ID_PATTERN, type PartitionRef } from '@kioku/core/adapter';

/**
 * File layout (readable by a person; ids become folder and file names):
 *
 *   {root}/users/{userId}/facts.json                  unnamed partitions: facts, documents, details
 *   {root}/users/{userId}/plans/{threadId}.json       named partitions: plans, working, sessions
 *   {root}/users/{userId}/agents/{agentId}/...        the same, for a user's agent-specific memory
 *   {root}/.locks/                                    lock directories (proper-lockfile)
 *
 * Ids are already restricted by core to `[A-Za-z0-9_.@+-]`, not starting with `.` or `-`; this module
 * checks again (defence in depth) and encodes upper-case letters as `^` + lower case, so `Alice` and
 * `alice` stay distinct on case-insensitive file systems (macOS, Windows).
 */

export const USERS_DIR = 'users';
export const AGENTS_DIR = 'agents';
export const LOCKS_DIR = '.locks';

function encodeSegment(value: string, what: string): string {
  if (!ID_PATTERN.test(value) || value.length > 128) {
    throw new ValidationError(`Unsafe ${what} for a file name: ${JSON.stringify(value)}`);
  }
  return value.replace(/[A-Z]/g, (c) => `^${c.toLowerCase()}`);
}

export function decodeSegment(name: string): string | undefined {
  const decoded = name.replace(/\^([a-z])/g, (_, c: string) => c.toUpperCase());
  return ID_PATTERN.test(decoded) && !decoded.includes('^') ? decoded : undefined;
}

/** The directory of a user (and agent) scope, relative to the root. */
export function scopeDir(userId: string, agentId: string | undefined): string {
  const user = path.join(USERS_DIR, encodeSegment(userId, 'user id'));
  return agentId === undefined ? user : path.join(user, AGENTS_DIR, encodeSegment(agentId, 'agent id'));
}

/** The data file of a partition, relative to the root. */
export function partitionFile(ref: PartitionRef): string {
  const dir = scopeDir(ref.userId, ref.agentId);
  return ref.name === undefined
    ? path.join(dir, `${ref.kind}.json`)
    : path.join(dir, ref.kind, `${encodeSegment(ref.name, `${ref.kind} name`)}.json`);
}

/** Resolve a relative data path under `root`, refusing anything that would land outside it. */
export function resolveInside(root: string, relative: string): string {
  const absolute = path.resolve(root, relative);
  const rel = path.relative(root, absolute);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new ValidationError(`Refusing a path outside the data directory: ${relative}`);
  }
  return absolute;
}

export const PARTITION_KINDS: readonly StoreKind[] = [
  'facts',
  'documents',
  'plans',
  'working',
  'sessions',
  'details',
];
