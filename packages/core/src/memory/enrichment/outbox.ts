import { z } from 'zod';
import { isKiokuError, isRetryableStorageError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseJsonOrUndefined } from '../../foundation/json.js';
import type { Scope } from '../../foundation/scope.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import type { Fact } from '../../store/facts/record.js';
import { baseScope, enrichmentRequestsSession, type OwnSession } from '../../store/sessions/own-session.js';
import type { KvEntry, TranscriptEntry } from '../../store/sessions/record.js';
import { markAfter, positionAfter, TranscriptMarkSchema } from '../../store/sessions/transcript-mark.js';
import type { PassResult } from '../changesets/changeset-log.js';
import type { DrainOptions, SessionDrain, UserDrain } from '../extraction/outbox.js';
import { PendingIndex } from '../extraction/pending-index.js';
import { type EnrichOptions, enrichMemory } from './enrich.js';

/** What enrichment passes are run with: the model, the memory rules, dedup, … */
export type OutboxEnrichOptions = Omit<
  EnrichOptions,
  'stores' | 'scope' | 'original' | 'signal' | 'apply' | 'directive'
> & {
  /** Replaces the built-in memory rules: the text, or a function read when a pass runs. */
  directive?: string | (() => Promise<string | undefined>);
};

export interface EnrichmentOutboxOptions extends OutboxEnrichOptions {
  /** The facts enriched, and the sessions holding the requests. */
  stores: Pick<KiokuStores, 'facts' | 'sessions'>;
  /** Failed passes over one request before it is skipped (default 3). */
  maxAttempts?: number;
}

/** One request: the saved memory and the version it was saved at. */
const RequestSchema = z.object({ factId: IdSchema, version: z.number().int().min(1) });

/** How far the requests were read, and how often the next one failed. */
const MarkRecordSchema = z.object({
  schemaVersion: z.literal(1),
  mark: TranscriptMarkSchema.optional(),
  failures: z.number().int().min(1).optional(),
});
type MarkRecord = z.infer<typeof MarkRecordSchema>;

interface MarkRead {
  record: MarkRecord;
  /** The version a write must expect (0: none yet). */
  version: number;
}

const KEY = 'watermark';
const READ_ALL = 100_000;
const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * save_memory's enrichments as an outbox, durable and visible to every worker the way extraction's turns
 * are. Each request is one entry of the user's (+ agent's) own session `{ kioku: 'enrichment' }`,
 * appended with `pending: true` right after the memory is saved (before save_memory answers), so the same
 * atomic append stores it and lists the user in the pending index. The requests past the watermark (one
 * k-v value in that session, written expecting the version read) are work still to do. `drainUser` runs
 * them one by one under the caller's `memory-work` lease: the enrichment, then the watermark moved past
 * it. A process that dies between the two leaves the request to be run again, which finds the original
 * deleted (the enrichment was kept: nothing to do) or at its saved version (it runs; entries already
 * written are found by dedup), so each memory is enriched once.
 */
export class EnrichmentOutbox {
  /** The pending index the requests mark (shared with extraction). */
  readonly index: PendingIndex;
  readonly #own: OwnSession;
  readonly #stores: EnrichmentOutboxOptions['stores'];
  readonly #enrich: OutboxEnrichOptions;
  readonly #maxAttempts: number;

  constructor(options: EnrichmentOutboxOptions) {
    const { stores, maxAttempts, ...enrich } = options;
    if (maxAttempts !== undefined && (!Number.isInteger(maxAttempts) || maxAttempts < 1)) {
      throw new RangeError('maxAttempts must be a positive integer.');
    }
    this.#stores = stores;
    this.#enrich = enrich;
    this.#maxAttempts = maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.index = new PendingIndex(stores.sessions);
    this.#own = enrichmentRequestsSession(stores.sessions);
  }

  /** Record that `fact` (just saved) is to be enriched: one append, which also marks the user pending. */
  async request(scope: Scope, fact: Pick<Fact, 'id' | 'version'>): Promise<void> {
    const content = JSON.stringify({ factId: fact.id, version: fact.version });
    await this.#own.write(baseScope(scope), (sessionId, s) =>
      this.#stores.sessions.transcriptAppend(
        s,
        sessionId,
        { role: 'system', content },
        { turnId: fact.id, pending: true },
      ),
    );
  }

  /** The requests not run yet, oldest first. */
  async pending(scope: Scope): Promise<{ factId: string; version: number }[]> {
    const s = baseScope(scope);
    const sessionId = await this.sessionId(s);
    if (sessionId === undefined) return [];
    const read = await this.#readMark(s, sessionId);
    const transcript = await this.#transcript(s, sessionId);
    return (transcript ?? []).slice(positionAfter(transcript ?? [], read.record.mark)).map(parseRequest);
  }

  /** The id of the user's (+ agent's) request session, when there is one. */
  sessionId(scope: Scope): Promise<string | undefined> {
    return this.#own.read(baseScope(scope), async (id) => id, undefined);
  }

  /**
   * Run the user's pending requests, one pass each, until none is left (or `maxPasses` ran): a drain of
   * the request session when it had work (none when the user has no request). The caller holds the
   * user's `memory-work` lease (`runPending` takes it). A failed pass is reported, not thrown (the request
   * is tried again, and skipped after `maxAttempts`); an abort is thrown.
   */
  async drainUser(scope: Scope, options: DrainOptions = {}): Promise<UserDrain> {
    const s = baseScope(scope);
    const drain = await this.#drain(s, options);
    const worked = drain && (drain.passes + drain.failed + drain.lost > 0 || drain.left > 0);
    return { scope: s, sessions: worked ? [drain] : [] };
  }

  async #drain(s: Scope, options: DrainOptions): Promise<SessionDrain | null> {
    const sessionId = await this.sessionId(s);
    if (sessionId === undefined) return null;
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
      const read = await this.#readMark(s, sessionId);
      const transcript = await this.#transcript(s, sessionId);
      if (!transcript) return drain;
      const at = positionAfter(transcript, read.record.mark);
      if (at >= transcript.length) {
        const mark = await this.index.mark(s, sessionId);
        if (mark === undefined) return drain;
        // Read after the mark: a request appended before it is found here, one after it moves the mark on.
        if ((await this.pending(s)).length > 0) continue;
        if (await this.index.done(s, sessionId, mark)) return drain;
        continue;
      }
      if (drain.passes + drain.failed >= maxPasses || options.stop?.aborted) {
        drain.left = transcript.length - at;
        return drain;
      }
      const next = markAfter(transcript, at + 1);
      let result: PassResult | undefined;
      try {
        result = await this.#run(s, parseRequest(transcript[at]!), options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        drain.failed++;
        drain.error = error;
        // An unreachable store costs the request no attempt (see ExtractionOutbox.drainSession).
        if (isRetryableStorageError(error)) {
          drain.left = transcript.length - at;
          return drain;
        }
        const attempts = (read.record.failures ?? 0) + 1;
        const skip = attempts >= this.#maxAttempts;
        if (skip) drain.skipped++;
        const record: MarkRecord = skip
          ? { schemaVersion: 1, mark: next }
          : { ...read.record, failures: attempts };
        await this.#writeMark(s, sessionId, read, record).catch(ignoreConflict);
        if (!skip) {
          drain.left = transcript.length - at;
          return drain;
        }
        continue;
      }
      try {
        await this.#writeMark(s, sessionId, read, { schemaVersion: 1, mark: next });
      } catch (error) {
        if (!isKiokuError(error, 'CONFLICT')) throw error;
        drain.lost++; // another drain ran it too (no lease held): the original's version check kept it once
        continue;
      }
      drain.passes++;
      drain.turns++;
      if (result && (result.changeset.operations.length > 0 || result.result)) drain.results.push(result);
    }
  }

  /**
   * Enrich the saved memory. One changed since it was saved (by the user, say) is reported as a conflict
   * without a model call; one deleted (by the user, or by this enrichment, kept before a crash) is no work.
   */
  async #run(
    scope: Scope,
    request: z.infer<typeof RequestSchema>,
    signal: AbortSignal | undefined,
  ): Promise<PassResult | undefined> {
    const current = await this.#stores.facts.get(scope, request.factId);
    if (!current) return undefined;
    // As saved: the version the request names, which the delete of the original expects.
    const original = { ...current, version: request.version };
    const { directive, ...rest } = this.#enrich;
    const rules = typeof directive === 'function' ? await directive() : directive;
    return enrichMemory({
      ...rest,
      stores: this.#stores,
      scope,
      original,
      ...(rules !== undefined ? { directive: rules } : {}),
      ...(signal ? { signal } : {}),
    });
  }

  #readMark(scope: Scope, sessionId: string): Promise<MarkRead> {
    return this.#stores.sessions.kvGet(scope, sessionId, KEY).then(parseMark);
  }

  #writeMark(scope: Scope, sessionId: string, read: MarkRead, record: MarkRecord): Promise<KvEntry> {
    return this.#stores.sessions.kvSet(scope, sessionId, KEY, JSON.stringify(record), {
      expectedVersion: read.version,
    });
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

function parseRequest(entry: TranscriptEntry): z.infer<typeof RequestSchema> {
  const parsed = RequestSchema.safeParse(parseJsonOrUndefined(entry.content));
  // An unreadable entry is no request: a version no fact has, so it is passed over.
  return parsed.success ? parsed.data : { factId: 'unreadable', version: Number.MAX_SAFE_INTEGER };
}

function parseMark(entry: KvEntry | null): MarkRead {
  if (entry === null) return { record: { schemaVersion: 1 }, version: 0 };
  const parsed = MarkRecordSchema.safeParse(parseJsonOrUndefined(entry.value));
  return { record: parsed.success ? parsed.data : { schemaVersion: 1 }, version: entry.version };
}

function ignoreConflict(error: unknown): undefined {
  if (isKiokuError(error, 'CONFLICT')) return undefined;
  throw error;
}
