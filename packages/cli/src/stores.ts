import { type Clock, combineStores, type KiokuStores, STORE_KINDS, type StoreKind } from '@kioku/core';
import { checkOptions, type OptionSpec } from '@kioku/core/adapter';
import { type Backend, type OpenOptions, openBackend, parseBackend } from './backends.js';
import { UsageError } from './errors.js';

/**
 * Where memory lives, as the CLI and the demo take it: one backend spec for every kind
 * (`json:./data`, `sqlite:./kioku.db`, `postgres://…`, `redis://…`), or one per kind with a default
 * (`{ default: 'sqlite:./kioku.db', working: 'redis://127.0.0.1:6379' }`).
 */
export type StoresSpec = string | ({ default?: string } & Partial<Record<StoreKind, string>>);

export interface OpenStoresOptions {
  /** Time source of the stores (timestamps, working-memory expiry); the system clock by default. */
  clock?: Clock;
  /** Run every backend's `setup()` before returning (default true). */
  setup?: boolean;
  /**
   * `target` (default): a missing store is created (a file, a directory, a schema). `source`: the store
   * must already exist, or NotFoundError names it and nothing is created — for whatever only reads or
   * erases, where a mistyped path must not read as an empty memory.
   */
  role?: OpenOptions['role'];
}

/** What openStores accepts, key by key: a spec for `default` or a kind, and its own options. */
const SPEC_KEYS: OptionSpec = Object.fromEntries(['default', ...STORE_KINDS].map((key) => [key, true]));
const OPEN_OPTIONS: OptionSpec = { clock: true, setup: [true, false], role: ['target', 'source'] };

/**
 * One stores bundle from backend specs: each distinct backend is opened once (its adapter imported only
 * when used), set up, and each kind taken from its own. `close()` closes every backend.
 */
export async function openStores(spec: StoresSpec, options: OpenStoresOptions = {}): Promise<KiokuStores> {
  // Checked before anything opens: `{ memories: … }` or `{ fact: … }` is refused with the nearest key.
  if (typeof spec !== 'string') checkOptions('openStores', spec, SPEC_KEYS);
  checkOptions('openStores options', options, OPEN_OPTIONS);
  const perKind = typeof spec === 'string' ? { default: spec } : spec;
  const opened = new Map<string, Backend>();
  const sources = {} as Record<StoreKind, KiokuStores>;
  try {
    for (const kind of STORE_KINDS) {
      const text = perKind[kind] ?? perKind.default;
      if (text === undefined) {
        throw new UsageError(`No backend for ${kind}: give a default spec or one for "${kind}".`);
      }
      const parsed = parseBackend(text);
      let backend = opened.get(parsed.identity);
      if (!backend) {
        backend = await openBackend(parsed, {
          role: options.role ?? 'target',
          ...(options.clock ? { clock: options.clock } : {}),
        });
        opened.set(parsed.identity, backend);
        if (options.setup !== false) await backend.setup();
      }
      sources[kind] = backend.stores;
    }
  } catch (error) {
    for (const backend of opened.values()) await backend.close().catch(() => {});
    throw error;
  }
  return combineStores(sources);
}
