import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Clock, KiokuStores } from '@kioku/core';
import { UsageError } from './errors.js';

/** A backend spec of a registered scheme, as the user typed it: `mydb:<location>`. */
export interface StoreAdapterSpec {
  /** The scheme, lower case, without the colon. */
  readonly scheme: string;
  /** Everything after `<scheme>:`, untouched. */
  readonly location: string;
  /** The whole spec. */
  readonly input: string;
}

export interface StoreAdapterContext {
  /** `source`: the data must already be there (`--from`); `target`: it may be created. */
  readonly role: 'source' | 'target';
  /** Time source of the stores; the system clock when absent. */
  readonly clock?: Clock;
}

/**
 * Opens the stores bundle of a spec: e.g. `storesOverBackend(new MyBackend(spec.location))`. The CLI
 * calls `setup()` on the result and `close()` when done.
 */
export type StoreAdapterFactory = (
  spec: StoreAdapterSpec,
  context: StoreAdapterContext,
) => KiokuStores | Promise<KiokuStores>;

/** What a module named in `KIOKU_ADAPTERS` exports: one factory per scheme it serves. */
export interface StoreAdapterModule {
  readonly storeAdapters: Readonly<Record<string, StoreAdapterFactory>>;
}

/** The schemes the CLI opens itself. */
export const BUILT_IN_SCHEMES = ['json', 'file', 'sqlite', 'postgres', 'postgresql', 'redis', 'rediss'];

const SCHEME = /^[a-z][a-z0-9+.-]*$/;
const registered = new Map<string, StoreAdapterFactory>();
const loadedModules = new Map<string, Promise<void>>();

/**
 * Make `<scheme>:<location>` a backend spec of `openStores`, `--store`, `--from` and `--to`, opened by
 * `factory`. Returns a function that removes the registration. Built-in schemes cannot be taken.
 */
export function registerStoreAdapter(scheme: string, factory: StoreAdapterFactory): () => void {
  const name = scheme.toLowerCase();
  if (!SCHEME.test(name)) {
    throw new UsageError(`"${scheme}" is not a scheme: use a letter, then letters, digits, "+", "." or "-".`);
  }
  if (BUILT_IN_SCHEMES.includes(name)) throw new UsageError(`"${name}:" is a built-in backend of the CLI.`);
  if (typeof factory !== 'function') throw new UsageError(`The adapter for "${name}:" is not a function.`);
  registered.set(name, factory);
  return () => {
    if (registered.get(name) === factory) registered.delete(name);
  };
}

/** The modules named in `KIOKU_ADAPTERS` (comma-separated package names or paths). */
export function adapterModules(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.KIOKU_ADAPTERS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** True when `scheme` can be opened: registered, or possibly served by a module of `KIOKU_ADAPTERS`. */
export function mayOpenScheme(scheme: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return registered.has(scheme) || adapterModules(env).length > 0;
}

/** The factory of `scheme`: registered, else from the modules of `KIOKU_ADAPTERS` (each imported once). */
export async function resolveStoreAdapter(
  scheme: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoreAdapterFactory> {
  const modules = adapterModules(env);
  if (!registered.has(scheme)) {
    for (const name of modules) {
      let loading = loadedModules.get(name);
      if (!loading) {
        loading = loadModule(name);
        loadedModules.set(name, loading);
      }
      await loading;
      if (registered.has(scheme)) break;
    }
  }
  const factory = registered.get(scheme);
  if (factory) return factory;
  throw new UsageError(
    modules.length === 0
      ? `No adapter for "${scheme}:". Name the module that serves it in KIOKU_ADAPTERS (e.g. KIOKU_ADAPTERS=my-kioku-adapter).`
      : `No adapter for "${scheme}:" in KIOKU_ADAPTERS (${modules.join(', ')}): none exports storeAdapters["${scheme}"].`,
  );
}

async function loadModule(name: string): Promise<void> {
  // A path (./x.js, /abs/x.js) is taken from the working directory; anything else is a package name.
  const specifier = name.startsWith('.') || isAbsolute(name) ? pathToFileURL(resolve(name)).href : name;
  let loaded: Partial<StoreAdapterModule>;
  try {
    loaded = (await import(specifier)) as Partial<StoreAdapterModule>;
  } catch (error) {
    throw new UsageError(
      `Could not load the adapter module "${name}" of KIOKU_ADAPTERS: ${(error as Error).message}. Install it where @kioku/cli is installed, or give its path.`,
    );
  }
  const adapters = loaded.storeAdapters;
  if (!adapters || typeof adapters !== 'object') {
    throw new UsageError(
      `The adapter module "${name}" of KIOKU_ADAPTERS exports no storeAdapters ({ scheme: (spec, context) => stores }).`,
    );
  }
  for (const [scheme, factory] of Object.entries(adapters)) {
    if (!registered.has(scheme.toLowerCase())) registerStoreAdapter(scheme, factory);
  }
}
