import { isoAt, systemClock } from '../../foundation/clock.js';
import { isKiokuError, isRetryableStorageError } from '../../foundation/errors.js';
import { retryOnConflict } from '../../foundation/retry-on-conflict.js';
import type { Scope } from '../../foundation/scope.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { isKiokuSession } from '../../store/sessions/kioku-sessions.js';
import { baseScope, enrichmentRequestsSession, type OwnSession } from '../../store/sessions/own-session.js';
import type { TranscriptEntry } from '../../store/sessions/record.js';
import { markAfter, positionAfter } from '../../store/sessions/transcript-mark.js';
import { newChangeset } from '../changesets/changeset.js';
import { ChangesetLog, type PassResult } from '../changesets/changeset-log.js';
import type { ExtractOptions } from './extract.js';
import { type PendingTurn, pendingTurnsOf } from './pending-exchanges.js';
import { PendingIndex } from './pending-index.js';
import { extractPendingTurns } from './pending-turns.js';
import { type ExtractionWatermark, ExtractionWatermarks, type WatermarksRead } from './watermarks.js';

export const OUTBOX_DEFAULTS = Object.freeze({
  /** Turns one extraction pass reads at most. */
  turnsPerPass: 8,
  /** Failed passes over the same turns before they are skipped (so one bad turn never blocks the rest). */
  maxAttempts: 3,
});

/** What the outbox's extraction passes are run with (the model, instructions, dedup, …). */
export type OutboxExtractOptions = Omit<
  ExtractOptions,
  'stores' | 'scope' | 'sessionId' | 'turn' | 'messages' | 'signal' | 'apply' | 'changesets'
>;

export interface ExtractionOutboxOptions extends OutboxExtractOptions {
  stores: Pick<KiokuStores, 'facts' | 'sessions' | 'working'>;
  /** Turns one pass reads at most (default 8). */
  turnsPerPass?: number;
  /** Failed passes over the same turns before they are skipped (default 3). */
  maxAttempts?: number;
}

export interface DrainOptions {
  /** Aborts the pass under way (its model call); its turns stay pending. */
  signal?: AbortSignal;
  /** A graceful stop: the pass under way finishes, no other starts. */
  stop?: AbortSignal;
  /** Passes (model-call rounds) to run at most; what is left stays pending. Default: until done. */
  maxPasses?: number;
}

/** What draining one session did. */
export interface SessionDrain {
  sessionId: string;
  /** Passes whose result was kept. */
  passes: number;
  /** Turns read by those passes. */
  turns: number;
  /** The changesets applied (passes that changed something). */
  results: PassResult[];
  /** Passes that lost the race to another pass over the same turns (their result was discarded). */
  lost: number;
  /** Passes that failed (the turns stay pending, or are skipped after `maxAttempts`). */
  failed: number;
  /** Turns skipped after failing `maxAttempts` times. */
  skipped: number;
  /** Turns still pending (the pass budget ran out). */
  left: number;
  /** The last failure, when a pass failed. */
  error?: unknown;
}

/** What draining one user (+ agent) did. */
export interface UserDrain {
  scope: Scope;
  sessions: SessionDrain[];
}

/** A mark before every entry (no transcript entry is from 1970): where a session never read starts. */
const START_MARK = Object.freeze({ ts: new Date(0).toISOString(), seen: 1 });

/** Every entry a transcript can hold (the session store caps it well below). */
const READ_ALL = 100_000;

/**
 * The transcripts as the outbox of extraction: what is past a session's watermark (`ExtractionWatermarks`)
 * is work still to do, derived from stored state only, so nothing is lost when a process dies after the
 * reply. `drainSession` extracts it pass by pass: each pass reads up to `turnsPerPass` turns, then writes
 * the new watermark expecting the version it read — a pass that loses that race discards its result — with
 * a claim naming its changeset, keeps and applies the changeset, and clears the claim. A pass found with a
 * claim (its process died) is finished: its kept changeset applied, or its turns read again when it died
 * before keeping it. So each turn is extracted exactly once, as long as one pass runs per user at a time
 * (the caller holds the user's `memory-work` lease).
 */
export class ExtractionOutbox {
  readonly index: PendingIndex;
  readonly watermarks: ExtractionWatermarks;
  readonly #stores: ExtractionOutboxOptions['stores'];
  readonly #extract: OutboxExtractOptions;
  readonly #changesets: ChangesetLog;
  readonly #turnsPerPass: number;
  readonly #maxAttempts: number;
  /** Not a conversation: its entries are save_memory's enrichment requests, drained by their own outbox. */
  readonly #requests: OwnSession;

  constructor(options: ExtractionOutboxOptions) {
    const { stores, turnsPerPass, maxAttempts, ...extract } = options;
    for (const [name, value] of Object.entries({ turnsPerPass, maxAttempts })) {
      if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
        throw new RangeError(`${name} must be a positive integer.`);
      }
    }
    this.#stores = stores;
    this.#extract = extract;
    this.#turnsPerPass = turnsPerPass ?? OUTBOX_DEFAULTS.turnsPerPass;
    this.#maxAttempts = maxAttempts ?? OUTBOX_DEFAULTS.maxAttempts;
    this.index = new PendingIndex(stores.sessions);
    this.watermarks = new ExtractionWatermarks(stores.sessions);
    this.#changesets = new ChangesetLog(stores.sessions);
    this.#requests = enrichmentRequestsSession(stores.sessions);
  }

  /** The session's turns past its watermark, oldest first. */
  async pending(scope: Scope, sessionId: string): Promise<PendingTurn[]> {
    const s = baseScope(scope);
    const read = await this.watermarks.read(s);
    const transcript = await this.#transcript(s, sessionId);
    if (!transcript) return [];
    const mark = read.sessions[sessionId];
    return pendingTurnsOf(transcript, positionAfter(transcript, mark?.claim ? mark.claim.from : mark));
  }

  /**
   * Extract the session's pending turns, pass by pass, until none is left (or `maxPasses` ran). The
   * caller holds the user's `memory-work` lease. A failed pass is reported in the result, not thrown;
   * an abort is thrown.
   */
  async drainSession(scope: Scope, sessionId: string, options: DrainOptions = {}): Promise<SessionDrain> {
    const s = baseScope(scope);
    const drain: SessionDrain = {
      sessionId,
      passes: 0,
      turns: 0,
      results: [],
      lost: 0,
      failed: 0,
      skipped: 0,
      left: 0,
    };
    const maxPasses = options.maxPasses ?? Number.POSITIVE_INFINITY;
    for (;;) {
      options.signal?.throwIfAborted();
      const read = await this.watermarks.read(s);
      const mark = read.sessions[sessionId];
      if (mark?.claim) {
        const settled = await this.#settle(s, sessionId, read, mark);
        if (settled) drain.results.push(settled);
        continue;
      }
      const transcript = await this.#transcript(s, sessionId);
      if (!transcript) {
        // The session is gone (deleted, the user forgotten): so is its work, and its pending mark.
        if (mark) await this.#write(s, read, { [sessionId]: null }).catch(ignoreConflict);
        return drain;
      }
      const pending = pendingTurnsOf(transcript, positionAfter(transcript, mark));
      if (pending.length === 0) {
        const at = await this.index.mark(s, sessionId);
        if (at === undefined) return drain;
        // Read after the mark: a turn appended before it is found here, one appended after it moves the
        // mark on, so the session stays pending (the clear below fails) and the loop drains it.
        if ((await this.pending(s, sessionId)).length > 0) continue;
        if (await this.index.done(s, sessionId, at)) return drain;
        continue;
      }
      if (drain.passes + drain.failed >= maxPasses || options.stop?.aborted) {
        drain.left = pending.length;
        return drain;
      }
      const batch = pending.slice(0, this.#turnsPerPass);
      const end = batch.at(-1)!.end;
      const next = markAfter(transcript, end);
      let result: PassResult | undefined;
      try {
        result = await this.#extractPass(s, sessionId, batch, options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        drain.failed++;
        drain.error = error;
        // A store that could not be reached says nothing about the turns: they wait for it, however often
        // (skipping them after `maxAttempts` would drop turns a restart happened to meet).
        if (isRetryableStorageError(error)) {
          drain.left = pending.length;
          return drain;
        }
        const attempts = (mark?.failures ?? 0) + 1;
        const skip = attempts >= this.#maxAttempts;
        if (skip) drain.skipped += batch.length;
        await this.#write(s, read, {
          [sessionId]: skip ? next : { ...(mark ?? START_MARK), failures: attempts },
        }).catch(ignoreConflict);
        if (!skip) {
          drain.left = pending.length;
          return drain;
        }
        continue;
      }
      const changeset = result.changeset;
      const changes = changeset.operations.length > 0;
      let written: WatermarksRead;
      try {
        written = await this.#write(s, read, {
          [sessionId]: changes
            ? { ...next, claim: { changesetId: changeset.id, ...(mark ? { from: plain(mark) } : {}) } }
            : next,
        });
      } catch (error) {
        if (!isKiokuError(error, 'CONFLICT')) throw error;
        drain.lost++; // another pass read these turns first: its result stands, this one is discarded
        continue;
      }
      drain.passes++;
      drain.turns += batch.length;
      if (changes) {
        await this.#changesets.propose(s, changeset);
        const applied = await this.#changesets.apply(
          this.#stores.facts,
          s,
          changeset,
          isoAt(this.#extract.clock ?? systemClock),
        );
        drain.results.push(applied);
        await this.#clearClaim(s, sessionId, changeset.id, written);
      }
    }
  }

  /**
   * Drain the user's sessions with work: those the pending index lists, or (with `allSessions`) every
   * conversation session of the user, for when the index may not know them.
   */
  async drainUser(scope: Scope, options: DrainOptions & { allSessions?: boolean } = {}): Promise<UserDrain> {
    const s = baseScope(scope);
    const ids = new Set((await this.index.sessions(s)).map((p) => p.sessionId));
    if (ids.size > 0) {
      const requests = await this.#requests.read(s, async (id) => id, undefined);
      if (requests !== undefined) ids.delete(requests);
    }
    if (options.allSessions) {
      for (const session of await this.#stores.sessions.list(s)) {
        if (!isKiokuSession(session)) ids.add(session.id);
      }
    }
    const sessions: SessionDrain[] = [];
    let passes = 0;
    for (const id of ids) {
      const maxPasses = (options.maxPasses ?? Number.POSITIVE_INFINITY) - passes;
      if (maxPasses <= 0) break;
      const drain = await this.drainSession(s, id, { ...options, maxPasses });
      passes += drain.passes + drain.failed;
      if (drain.passes + drain.failed + drain.lost > 0 || drain.left > 0) sessions.push(drain);
    }
    return { scope: s, sessions };
  }

  #extractPass(
    scope: Scope,
    sessionId: string,
    batch: readonly PendingTurn[],
    signal: AbortSignal | undefined,
  ): Promise<PassResult> {
    const exchanges = batch.flatMap((t) => (t.exchange ? [{ turn: t.turn, exchange: t.exchange }] : []));
    if (exchanges.length === 0) {
      const createdAt = isoAt(this.#extract.clock ?? systemClock);
      return Promise.resolve({ changeset: newChangeset('extraction', scope, [], { createdAt }) });
    }
    return extractPendingTurns({
      ...this.#extract,
      stores: this.#stores,
      scope,
      sessionId,
      exchanges,
      apply: false,
      changesets: this.#changesets,
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Finish a pass that died holding a claim: apply its kept changeset (once), or, when it died before
   * keeping it, move the watermark back to where that pass started so its turns are read again.
   */
  async #settle(
    scope: Scope,
    sessionId: string,
    read: WatermarksRead,
    mark: ExtractionWatermark,
  ): Promise<PassResult | undefined> {
    const claim = mark.claim!;
    const kept = await this.#changesets.get(scope, claim.changesetId);
    if (!kept) {
      await this.#write(scope, read, { [sessionId]: claim.from ?? null }).catch(ignoreConflict);
      return undefined;
    }
    let result: PassResult | undefined;
    if (kept.changeset.status === 'proposed') {
      const applied = await this.#changesets.apply(
        this.#stores.facts,
        scope,
        kept.changeset,
        isoAt(this.#extract.clock ?? systemClock),
      );
      result = applied;
    }
    await this.#clearClaim(scope, sessionId, claim.changesetId, read);
    return result;
  }

  async #clearClaim(
    scope: Scope,
    sessionId: string,
    changesetId: string,
    read: WatermarksRead,
  ): Promise<void> {
    let current = read;
    await retryOnConflict(async () => {
      const mark = current.sessions[sessionId];
      if (mark?.claim?.changesetId !== changesetId) return;
      try {
        await this.#write(scope, current, { [sessionId]: plain(mark) });
      } catch (error) {
        current = await this.watermarks.read(scope);
        throw error;
      }
    });
  }

  async #write(
    scope: Scope,
    read: WatermarksRead,
    changes: Record<string, ExtractionWatermark | null>,
  ): Promise<WatermarksRead> {
    return this.watermarks.write(scope, read, changes);
  }

  async #transcript(scope: Scope, sessionId: string): Promise<TranscriptEntry[] | null> {
    try {
      return await this.#stores.sessions.transcriptReadLast(scope, sessionId, READ_ALL);
    } catch (error) {
      if (isKiokuError(error, 'NOT_FOUND')) return null;
      throw error;
    }
  }
}

/** The mark without its claim or failures. */
function plain(mark: ExtractionWatermark): ExtractionWatermark {
  return { ts: mark.ts, seen: mark.seen };
}

function ignoreConflict(error: unknown): undefined {
  if (isKiokuError(error, 'CONFLICT')) return undefined;
  throw error;
}
