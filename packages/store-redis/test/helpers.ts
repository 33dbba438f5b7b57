import { randomBytes } from 'node:crypto';
import type { Clock } from '@kioku/core';
import type { StoreCapabilities, StoreHarness } from '@kioku/store-test-suite';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import type { RedisStoreBase } from '../src/base.js';
import { RedisConnection, type RedisStoreOptions } from '../src/index.js';

export const redisUrl = inject('redisUrl');
export const runPrefix = inject('runPrefix');
export const noServer = redisUrl === '';

let shared: Redis | undefined;

/** One client per test file, shared by the stores `create` makes (each under its own prefix). */
export function sharedClient(): Redis {
  shared ??= new Redis(redisUrl);
  return shared;
}

export async function closeSharedClient(): Promise<void> {
  await shared?.quit();
  shared = undefined;
}

/** A prefix nobody else uses, below the run's prefix (so the run's teardown removes it too). */
export function freshPrefix(): string {
  return `${runPrefix}${randomBytes(5).toString('hex')}:`;
}

/** Delete every key under `prefix` (SCAN + UNLINK). */
export function deletePrefix(prefix: string): Promise<number> {
  return new RedisConnection({ client: sharedClient(), prefix }).deleteAll();
}

/** Every key under `prefix`, for side-channel checks. */
export function keysUnder(prefix: string): Promise<string[]> {
  return new RedisConnection({ client: sharedClient(), prefix }).scan(
    `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
  );
}

/**
 * Conformance harness: every `create` is a store on the file's shared client under a fresh prefix
 * (empty by construction); the twin is a store over the same prefix with its own client (its own
 * connection, as another process would have); `destroy` closes the store and deletes its keys.
 */
export function redisHarness<S extends RedisStoreBase>(
  name: string,
  make: (options: RedisStoreOptions & { clock: Clock }) => S,
  options: { capabilities?: Partial<StoreCapabilities>; clock?: (ctx: { clock: Clock }) => Clock } = {},
): StoreHarness<S> {
  const prefixes = new WeakMap<S, string>();
  const twins = new WeakSet<S>();
  const clockOf = options.clock ?? ((ctx) => ctx.clock);
  return {
    name: `redis ${name}`,
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    create(ctx) {
      const prefix = freshPrefix();
      const store = make({ client: sharedClient(), prefix, clock: clockOf(ctx) });
      prefixes.set(store, prefix);
      return store;
    },
    createTwin(store, ctx) {
      const prefix = prefixes.get(store);
      if (!prefix) throw new Error('not a store of this harness');
      const twin = make({ url: redisUrl, prefix, clock: clockOf(ctx) });
      twins.add(twin);
      return twin;
    },
    async destroy(store) {
      await store.close();
      const prefix = prefixes.get(store);
      if (prefix && !twins.has(store)) {
        prefixes.delete(store);
        await deletePrefix(prefix);
      }
    },
  };
}
