import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<AbortSignal>();

/**
 * Run `fn` with `signal` as the signal of the work under way (a turn's prepare or record): store calls
 * made inside stop waiting when it aborts (`withAbortSignal`). Without a signal, `fn` runs as is.
 */
export function runWithSignal<T>(signal: AbortSignal | undefined, fn: () => T): T {
  return signal ? storage.run(signal, fn) : fn();
}

/** The signal of the work under way, when it was given one. */
export function currentSignal(): AbortSignal | undefined {
  return storage.getStore();
}

/** Run `fn` outside any signal: background work a turn queued outlives the turn's signal. */
export function runWithoutSignal<T>(fn: () => T): T {
  return storage.exit(fn);
}
