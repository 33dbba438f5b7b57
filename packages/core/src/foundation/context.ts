import { AsyncLocalStorage } from 'node:async_hooks';
import { ScopeError } from './errors.js';
import { parseScope, type Scope, type ThreadScope } from './scope.js';

const storage = new AsyncLocalStorage<Readonly<Scope>>();

/**
 * Run `fn` with `scope` as the current scope. Code awaited inside (middlewares, tool handlers) reads it
 * with `currentScope()`. There is no static fallback: outside a
 * `runWithScope` call there is no scope, so one user's turn can never leak into another's.
 */
export function runWithScope<T>(scope: Scope, fn: () => T): T {
  const parsed = Object.freeze(parseScope(scope));
  return storage.run(parsed, fn);
}

/** The scope of the turn being run. Throws a ScopeError when called outside `runWithScope`. */
export function currentScope(): Readonly<Scope> {
  const scope = storage.getStore();
  if (!scope) {
    throw new ScopeError(
      'No Kioku scope is active: call this inside runWithScope() (or a Conversation turn), which sets the user.',
    );
  }
  return scope;
}

/** The current scope, or undefined outside a turn. */
export function tryCurrentScope(): Readonly<Scope> | undefined {
  return storage.getStore();
}

/** The current scope, which must name a thread (plans are per thread). Throws a ScopeError otherwise. */
export function currentThreadScope(): Readonly<ThreadScope> {
  const scope = currentScope();
  if (scope.threadId === undefined) {
    throw new ScopeError('The active Kioku scope has no threadId; plans need the conversation thread.');
  }
  return scope as Readonly<ThreadScope>;
}
