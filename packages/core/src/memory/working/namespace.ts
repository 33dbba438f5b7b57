import { ScopeError, ValidationError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import { keyHasPrefix, namespaceOf } from '../../store/working/record.js';
import { isReservedKey, RESERVED_KEY_ROOT, reservedKeyError } from '../../store/working/reserved.js';

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$/;

/**
 * First key segments that mark a full path (`session/…`, `patrol/…`, `subagent/…`). A key starting with
 * anything else is relative to the caller's own namespace, so `drafts/v2` is saved as
 * `session/{id}/drafts/v2`.
 */
export const NAMESPACE_ROOTS = Object.freeze(['session', 'patrol', 'subagent']);

/** A user session's namespace, the default: `session/{sessionId}`. */
export function sessionNamespace(sessionId: string): string {
  return checkNamespace(`session/${sessionId}`);
}

/** A patrol task's namespace: `patrol/{taskName}`. Its findings show in user sessions. */
export function patrolNamespace(taskName: string): string {
  return checkNamespace(`patrol/${taskName}`);
}

/** A subagent's namespace: `subagent/{taskId}`. */
export function subagentNamespace(taskId: string): string {
  return checkNamespace(`subagent/${taskId}`);
}

/** A namespace is exactly two key segments (`session/abc123`), never under Kioku's reserved root. */
export function checkNamespace(namespace: string): string {
  const segments = namespace.split('/');
  if (segments.length !== 2 || !segments.every((s) => s.length <= 128 && SEGMENT.test(s))) {
    throw new ValidationError(
      `"${namespace}" is not a working-memory namespace: it must be two segments such as "session/abc123".`,
    );
  }
  if (isReservedKey(namespace)) {
    throw new ValidationError(
      `"${namespace}" is under "${RESERVED_KEY_ROOT}/", which Kioku keeps for itself.`,
    );
  }
  return namespace;
}

/** A prefix a tool or prompt block may list or search under: never Kioku's reserved root. */
export function checkReadablePrefix(prefix: string): string {
  if (isReservedKey(prefix)) throw reservedKeyError(prefix);
  return prefix;
}

/** The default own namespace: the turn's thread (session). */
export function defaultNamespace(scope: Readonly<Scope>): string {
  if (scope.threadId === undefined) {
    throw new ScopeError('Working memory needs the session: the active scope has no threadId.');
  }
  return sessionNamespace(scope.threadId);
}

/** True when `key` names a full path (its first segment is a namespace root or the own root). */
export function isFullPath(key: string, ownNamespace: string): boolean {
  const root = key.split('/', 1)[0]!;
  return key.includes('/') && (NAMESPACE_ROOTS.includes(root) || root === ownNamespace.split('/', 1)[0]);
}

/**
 * The stored key for what the model passed: a full path as is, a plain key under the own namespace. A key
 * naming Kioku's reserved root (`kioku/…`, even meant as a plain key) is refused with VALIDATION.
 */
export function resolveKey(key: string, ownNamespace: string): string {
  if (isReservedKey(key)) throw reservedKeyError(key);
  const resolved = isFullPath(key, ownNamespace) ? key : `${ownNamespace}/${key}`;
  return checkReadablePrefix(resolved);
}

/**
 * The key a write goes to. Writes stay in the own namespace: a full path into another one is refused with
 * a ScopeError that says what to do instead.
 */
export function resolveWriteKey(key: string, ownNamespace: string): string {
  const resolved = resolveKey(key, ownNamespace);
  if (!keyHasPrefix(resolved, ownNamespace)) {
    const tail = key.split('/').at(-1) || 'notes';
    throw new ScopeError(
      `Working memory writes go to your own namespace "${ownNamespace}"; "${key}" is in ` +
        `"${namespaceOf(key)}". Use a plain key such as "${tail}" (saved as "${ownNamespace}/${tail}").`,
      { details: { key, namespace: ownNamespace } },
    );
  }
  return resolved;
}
