/** Stable error codes. Match on `error.code`, never on the message. */
export type KiokuErrorCode =
  | 'NOT_FOUND'
  | 'VALIDATION'
  | 'CONFLICT'
  | 'UNSUPPORTED'
  | 'STORAGE'
  | 'CORRUPT_DATA'
  | 'SCOPE'
  | 'CAPACITY'
  | 'MODEL_OUTPUT'
  | 'ABORTED';

export interface KiokuErrorOptions {
  cause?: unknown;
  /** Structured details (field paths, file names, limits) for logs and tool results. */
  details?: Record<string, unknown>;
}

/** The one error family every Kioku package throws. */
export class KiokuError extends Error {
  readonly code: KiokuErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: KiokuErrorCode, message: string, options: KiokuErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
  }
}

/**
 * The caller's `AbortSignal` fired while Kioku waited on a store call (`details.operation` names it, e.g.
 * `sessions.transcriptAppend`): Kioku stopped waiting. A read did nothing; a write that was already sent
 * may still be applied by the backend, whole (each call is atomic) — retry a turn's `record` with its
 * `turnId` to store it once.
 */
export class AbortedError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('ABORTED', message, options);
  }
}

/** A record, session, plan step or key does not exist in the caller's scope. */
export class NotFoundError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('NOT_FOUND', message, options);
  }
}

/** Input failed validation (bad id, oversized value, invalid record or snapshot). Nothing was written. */
export class ValidationError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('VALIDATION', message, options);
  }
}

/** The write conflicts with what is stored (e.g. an id that already exists). */
export class ConflictError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('CONFLICT', message, options);
  }
}

/** The store or backend does not support this operation or snapshot version. */
export class UnsupportedError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('UNSUPPORTED', message, options);
  }
}

/**
 * The backend failed (I/O error, lock timeout, lost connection, a call past its deadline). `retryable`:
 * the backend could not be reached or did not answer in time, so the same call may succeed later; a
 * write that failed this way may or may not have been applied (retry writes with their idempotency key,
 * e.g. `record`'s `turnId`).
 */
export class StorageError extends KiokuError {
  readonly retryable: boolean;

  constructor(message: string, options?: KiokuErrorOptions & { retryable?: boolean }) {
    super('STORAGE', message, options);
    this.retryable = options?.retryable ?? false;
  }
}

/** A `StorageError` that says the backend may answer if asked again (unreachable, restarting, past a deadline). */
export function isRetryableStorageError(error: unknown): error is StorageError {
  return error instanceof StorageError && error.retryable;
}

/**
 * `Conversation.run` could not record its turn (the model answered; the transcript append or a feature's
 * reaction failed). The turn may or may not be stored: `record(error.messages, { turnId: error.turnId })`
 * stores it exactly once. `cause` is the store's error.
 */
export class TurnNotRecordedError extends StorageError {
  readonly sessionId: string;
  readonly turnId: string;
  readonly messages: readonly unknown[];

  constructor(sessionId: string, turnId: string, messages: readonly unknown[], cause: unknown) {
    super(
      `The turn ${turnId} of session ${sessionId} was answered but not recorded (${cause instanceof Error ? cause.message : String(cause)}). Retry with conversation.record(error.messages, { turnId: error.turnId }): it is stored once.`,
      {
        cause,
        retryable: !(cause instanceof KiokuError) || (cause instanceof StorageError && cause.retryable),
        details: { sessionId, turnId },
      },
    );
    this.sessionId = sessionId;
    this.turnId = turnId;
    this.messages = messages;
  }
}

/** Persisted data is unreadable or invalid; the store refuses to overwrite it. `details.file` names it. */
export class CorruptDataError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('CORRUPT_DATA', message, options);
  }
}

/** No scope is set, or an operation tried to cross into another scope. */
export class ScopeError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('SCOPE', message, options);
  }
}

/** A configured capacity would be exceeded and the store is set to reject rather than evict. */
export class CapacityError extends KiokuError {
  constructor(message: string, options?: KiokuErrorOptions) {
    super('CAPACITY', message, options);
  }
}

/** One problem with a model's structured reply: where (`facts[0].content`, or `''` for the whole reply) and what. */
export interface OutputIssue {
  path: string;
  message: string;
}

/**
 * A model's reply was still not a valid object of the requested schema after the repair attempt.
 * `details` carries `schemaName`, `issues`, `attempts`, `usage` and `text` (the last reply, cut to 4 KB).
 */
export class StructuredOutputError extends KiokuError {
  readonly issues: readonly OutputIssue[];

  constructor(message: string, options: KiokuErrorOptions & { issues: readonly OutputIssue[] }) {
    super('MODEL_OUTPUT', message, { ...options, details: { ...options.details, issues: options.issues } });
    this.issues = options.issues;
  }
}

export function isKiokuError(error: unknown, code?: KiokuErrorCode): error is KiokuError {
  return error instanceof KiokuError && (code === undefined || error.code === code);
}
