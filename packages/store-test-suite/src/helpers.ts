import { randomBytes } from 'node:crypto';
import { isKiokuError, type KiokuError, type KiokuErrorCode, type Scope } from '@kioku/core';
import { expect } from 'vitest';

/** A random id with a readable prefix, unique per call, so tests never share a partition. */
export function randomId(prefix = 'id'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A fresh user scope (optionally with an agent and a thread). */
export function randomScope(options: { agent?: boolean; thread?: boolean } = {}): Scope {
  return {
    userId: randomId('user'),
    ...(options.agent ? { agentId: randomId('agent') } : {}),
    ...(options.thread ? { threadId: randomId('thread') } : {}),
  };
}

/** A fresh scope that always names a thread (plans). */
export function randomThreadScope(options: { agent?: boolean } = {}): Scope & { threadId: string } {
  return { ...randomScope(options), threadId: randomId('thread') };
}

/**
 * Values every id (user, agent, thread, record, key) must reject with a VALIDATION error: path
 * traversal, globs, separators, empty, oversized, control characters.
 */
export const HOSTILE_IDS: readonly string[] = Object.freeze([
  '../../etc/passwd',
  '..',
  '.',
  '*',
  'a:b',
  'a/b',
  'a\\b',
  '',
  ' ',
  'a b',
  'x'.repeat(1000),
  '\u0000',
  'a\u0000b',
  'a\nb',
  '%2e%2e',
  '-rf',
  '.hidden',
]);

/** A printable label for a hostile value in test names. */
export function label(value: string): string {
  return JSON.stringify(value.length > 24 ? `${value.slice(0, 12)}…(${value.length} chars)` : value);
}

/**
 * Assert that `action` rejects with a KiokuError of `code` and return the error. `action` may be a
 * promise or a function returning one; a function that throws synchronously fails the assertion
 * (store methods must reject, not throw).
 */
export async function expectKiokuError(
  action: Promise<unknown> | (() => Promise<unknown>),
  code: KiokuErrorCode,
): Promise<KiokuError> {
  let promise: Promise<unknown>;
  if (typeof action === 'function') {
    try {
      promise = action();
    } catch (error) {
      throw new Error(`Expected a rejected promise (${code}), but the call threw synchronously: ${error}`);
    }
  } else promise = action;
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await promise };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) {
    expect.fail(`Expected a KiokuError ${code}, but the call succeeded with ${preview(outcome.value)}`);
  }
  const { error } = outcome;
  if (!isKiokuError(error)) {
    expect.fail(`Expected a KiokuError ${code}, but got ${describeError(error)}`);
  }
  expect(error.code, `error message: ${error.message}`).toBe(code);
  return error;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return preview(error);
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** JSON with object keys sorted, so records from different backends compare by content. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : v,
  );
}

/**
 * Records in a canonical order (a backend may return partitions in any order), with keys whose value
 * is `undefined` dropped: a missing optional field and an explicit `undefined` mean the same.
 */
export function canonicalRecords<R>(records: readonly R[]): unknown[] {
  return records
    .map((r) => JSON.parse(JSON.stringify(r)) as unknown)
    .sort((a, b) => canonicalJson(a).localeCompare(canonicalJson(b)));
}

/** ISO timestamp of the suite clock. */
export function isoNow(clock: { now(): number }): string {
  return new Date(clock.now()).toISOString();
}

/** Run `count` calls at once. */
export function times<T>(count: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => fn(i)));
}

/** A string of `length` characters. */
export function sized(length: number, char = 'x'): string {
  return char.repeat(length);
}

/**
 * A check to call after each write: every store's revision of `scope` must be one that store never gave
 * before (stores on different connections need not agree, only change). A value that came back could match
 * a prompt block built before the write, or from records an erasure removed.
 */
export function expectNewRevisions(
  stores: ReadonlyArray<{ revision?(scope: Scope): Promise<string> }>,
  scope: Scope,
): () => Promise<void> {
  const seen = stores.map(() => new Set<string>());
  return async () => {
    for (const [i, store] of stores.entries()) {
      const revision = await store.revision!(scope);
      expect(seen[i]!.has(revision), `revision ${revision} came back`).toBe(false);
      seen[i]!.add(revision);
    }
  };
}
