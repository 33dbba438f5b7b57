import { currentSignal } from '../../foundation/abort-context.js';
import { AbortedError } from '../../foundation/errors.js';
import type { KiokuStores } from './bundle.js';
import { keepEmbedder } from './with-embeddings.js';

/**
 * The bundle with every store call honouring the current `AbortSignal` (`runWithSignal`: a turn's
 * prepare and record): a call made after it aborted is not made, and one under way stops being waited for,
 * both failing with an AbortedError that names the call. One place for every adapter; the backend may
 * still finish a call already sent, whole, since each call is atomic. Calls outside a signal pass through.
 */
export function withAbortSignal(stores: KiokuStores): KiokuStores {
  const wrapped: KiokuStores = {
    facts: abortable(stores.facts, 'facts'),
    documents: abortable(stores.documents, 'documents'),
    plans: abortable(stores.plans, 'plans'),
    working: abortable(stores.working, 'working'),
    sessions: abortable(stores.sessions, 'sessions'),
    details: abortable(stores.details, 'details'),
    ...(stores.vectors ? { vectors: abortable(stores.vectors, 'vectors') } : {}),
    setup: () => stores.setup(),
    close: () => stores.close(),
  };
  keepEmbedder(stores, wrapped);
  return wrapped;
}

function abortable<T extends object>(store: T, kind: string): T {
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'constructor') return value;
      let method = methods.get(key);
      if (method === undefined) {
        const operation = `${kind}.${String(key)}`;
        method = (...args: unknown[]) => {
          const signal = currentSignal();
          if (!signal) return value.apply(target, args);
          if (signal.aborted) return Promise.reject(aborted(operation, signal, 'before it was made'));
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? race(result, signal, operation) : result;
        };
        methods.set(key, method);
      }
      return method;
    },
  });
}

function race<T>(call: Promise<T>, signal: AbortSignal, operation: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(operation, signal, 'while it ran'));
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function aborted(operation: string, signal: AbortSignal, when: string): AbortedError {
  return new AbortedError(
    `The store call ${operation} was aborted ${when}: the caller's signal fired, so Kioku stopped waiting. A read did nothing; a write may still be applied whole — retry record() with its turnId to store a turn once.`,
    { cause: signal.reason, details: { operation } },
  );
}
