import { runWithoutSignal } from '../../foundation/abort-context.js';
import { isKiokuError } from '../../foundation/errors.js';
import { shortId } from '../../foundation/ids.js';
import type { Scope } from '../../foundation/scope.js';
import type { ApplyResult } from '../changesets/apply.js';
import type { Changeset } from '../changesets/changeset.js';

/** What a finished job reports: the changeset it produced and what applying it did. */
export interface JobOutcome {
  changeset?: Changeset;
  result?: ApplyResult;
}

/** Work done after a reply, for one user: an extraction, an enrichment, … */
export interface BackgroundJob {
  /** What the job does (`extraction`, `enrichment`, …), for the events. */
  kind: string;
  scope: Scope;
  /** The signal aborts when the queue is closed with a hard stop. */
  run(signal: AbortSignal): Promise<JobOutcome | undefined>;
}

/** A job as events name it. */
export interface JobInfo {
  id: string;
  kind: string;
  userId: string;
  agentId?: string;
}

/**
 * What the queue reports. `failed.code` is the Kioku error code (`MODEL_OUTPUT`, `CONFLICT`, …),
 * `ABORTED` for a job stopped by a hard close, or `INTERNAL` for any other error.
 */
export type BackgroundEvent =
  | { type: 'queued'; job: JobInfo; pending: number }
  | { type: 'done'; job: JobInfo; changeset?: Changeset; result?: ApplyResult }
  | { type: 'failed'; job: JobInfo; code: string; message: string; error: unknown }
  | { type: 'refused'; job: JobInfo; reason: 'full' | 'closed'; pending: number };

/**
 * Runs a job's work for a scope, e.g. under a per-user lease so that several app instances never run
 * one user's background work at once. Whatever it throws fails the job.
 */
export type BackgroundGuard = <T>(scope: Scope, run: () => Promise<T>) => Promise<T>;

export interface BackgroundQueueOptions {
  /** Jobs accepted and not finished (queued or running) at most; a job beyond is refused. Default 100. */
  maxPending?: number;
  /** Every event; what it throws is ignored. */
  onEvent?: (event: BackgroundEvent) => void;
  guard?: BackgroundGuard;
}

export const BACKGROUND_DEFAULTS = Object.freeze({ maxPending: 100 });

/** Counters since the queue was made. */
export interface BackgroundStats {
  queued: number;
  done: number;
  failed: number;
  refused: number;
}

/**
 * Memory work that runs after the reply, never before it: `enqueue` returns at once. Bounded: beyond
 * `maxPending` unfinished jobs a new one is refused (reported, and `enqueue` returns false) rather than
 * queued without end or waited for. The jobs of one user run one at a time, in order; different users
 * run side by side. A job's failure is reported through `onEvent` and never thrown at the caller, and
 * the next job runs as usual.
 */
export class BackgroundQueue {
  readonly #maxPending: number;
  readonly #onEvent: ((event: BackgroundEvent) => void) | undefined;
  readonly #guard: BackgroundGuard | undefined;
  readonly #lanes = new Map<string, Promise<void>>();
  readonly #unfinished = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #stats: BackgroundStats = { queued: 0, done: 0, failed: 0, refused: 0 };
  readonly #flushHooks: (() => void)[] = [];
  #closed = false;

  constructor(options: BackgroundQueueOptions = {}) {
    const maxPending = options.maxPending ?? BACKGROUND_DEFAULTS.maxPending;
    if (!Number.isInteger(maxPending) || maxPending < 1) {
      throw new RangeError('maxPending must be a positive integer.');
    }
    this.#maxPending = maxPending;
    this.#onEvent = options.onEvent;
    this.#guard = options.guard;
  }

  /** Jobs accepted and not finished yet. */
  get pending(): number {
    return this.#unfinished.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get stats(): Readonly<BackgroundStats> {
    return { ...this.#stats };
  }

  /** Queue a job; false when it was refused (the queue is full or closed), which is reported too. */
  enqueue(job: BackgroundJob): boolean {
    const info: JobInfo = {
      id: shortId(),
      kind: job.kind,
      userId: job.scope.userId,
      ...(job.scope.agentId !== undefined ? { agentId: job.scope.agentId } : {}),
    };
    if (this.#closed || this.#unfinished.size >= this.#maxPending) {
      this.#stats.refused++;
      this.#emit({
        type: 'refused',
        job: info,
        reason: this.#closed ? 'closed' : 'full',
        pending: this.#unfinished.size,
      });
      return false;
    }
    const lane = job.scope.userId;
    const previous = this.#lanes.get(lane) ?? Promise.resolve();
    // Outside the signal of the turn that queued it: the job outlives the turn.
    const done = previous.then(() => runWithoutSignal(() => this.#run(job, info)));
    this.#lanes.set(lane, done);
    this.#unfinished.add(done);
    done.then(() => {
      this.#unfinished.delete(done);
      if (this.#lanes.get(lane) === done) this.#lanes.delete(lane);
    });
    this.#stats.queued++;
    this.#emit({ type: 'queued', job: info, pending: this.#unfinished.size });
    return true;
  }

  /**
   * Run `hook` at the start of every `flush` and `close`, e.g. to queue work that waits for a trigger (a
   * session's extraction waits for more turns) so that flushing does it now. What it throws is ignored.
   */
  onFlush(hook: () => void): void {
    this.#flushHooks.push(hook);
  }

  /**
   * Queue what waits for a trigger (see `onFlush`), then resolve when every job accepted so far has
   * finished (done or failed). Never rejects.
   */
  async flush(): Promise<void> {
    this.#runFlushHooks();
    await this.#settled();
  }

  /**
   * Queue what waits for a trigger (see `onFlush`), take no more jobs and wait for the accepted ones. When `signal` aborts first (a hard stop), running
   * jobs see their signal abort, jobs not started are reported as failed (`ABORTED`) without running, and
   * `close` resolves without waiting for them.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.#closed) this.#runFlushHooks();
    this.#closed = true;
    const { signal } = options;
    if (!signal) return this.#settled();
    const stopped = new Promise<void>((resolve) => {
      const stop = () => {
        this.#abort.abort(signal.reason);
        resolve();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    await Promise.race([this.#settled(), stopped]);
  }

  async #settled(): Promise<void> {
    await Promise.all([...this.#unfinished]);
  }

  #runFlushHooks(): void {
    for (const hook of this.#flushHooks) {
      try {
        hook();
      } catch {
        // a hook's error never fails a flush
      }
    }
  }

  async #run(job: BackgroundJob, info: JobInfo): Promise<void> {
    const signal = this.#abort.signal;
    try {
      signal.throwIfAborted();
      const work = () => job.run(signal);
      const outcome = (await (this.#guard ? this.#guard(job.scope, work) : work())) ?? {};
      this.#stats.done++;
      this.#emit({
        type: 'done',
        job: info,
        ...(outcome.changeset ? { changeset: outcome.changeset } : {}),
        ...(outcome.result ? { result: outcome.result } : {}),
      });
    } catch (error) {
      this.#stats.failed++;
      this.#emit({
        type: 'failed',
        job: info,
        code: codeOf(error, signal),
        message: error instanceof Error ? error.message : String(error),
        error,
      });
    }
  }

  #emit(event: BackgroundEvent): void {
    try {
      const returned = this.#onEvent?.(event) as unknown;
      // An async listener's rejection must not become an unhandled rejection.
      if (returned instanceof Promise) returned.catch(() => {});
    } catch {
      // A listener's error never reaches the conversation.
    }
  }
}

function codeOf(error: unknown, signal: AbortSignal): string {
  if (isKiokuError(error)) return error.code;
  if (signal.aborted || (error instanceof Error && error.name === 'AbortError')) return 'ABORTED';
  return 'INTERNAL';
}
