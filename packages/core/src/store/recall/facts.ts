import { type Clock, systemClock } from '../../foundation/clock.js';
import { categoryMatches, hasAllTags } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import { SizedLru } from '../../foundation/sized-lru.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { WriteOptions } from '../../foundation/version.js';
import { linkedNames, subjectOf } from '../../search/signals/entities.js';
import { PREFERENCE_CATEGORY } from '../../search/signals/preferences.js';
import { questionShare } from '../../search/signals/questions.js';
import {
  DEFAULT_SIGNAL_WEIGHTS,
  type QuerySignals,
  querySignals,
  rerankCandidates,
  type SignalCandidate,
  type SignalWeights,
} from '../../search/signals/rerank.js';
import { type TimeSpan, timeSpans } from '../../search/signals/time.js';
import { DelegatingFactStore } from '../facts/delegating.js';
import {
  type Fact,
  type FactHit,
  type FactInput,
  type FactPatch,
  type FactQuery,
  FactQuerySchema,
} from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import type { RestoreOptions, RestoreReport } from '../snapshot/envelope.js';

export interface RecallSignalOptions {
  /** Weights of the signals (0 turns one off); default {@link DEFAULT_SIGNAL_WEIGHTS}. */
  weights?: Partial<SignalWeights>;
  /**
   * How many of the store's hits the signals re-rank for a search of `limit`: default `max(32, 4 × limit)`,
   * at most 1000. A turn is lifted by the turn before it only when both are among them.
   */
  pool?: (limit: number) => number;
  /** "Now" for a query's relative time expressions ("last week"); default the system clock. */
  clock?: Clock;
}

export const RECALL_POOL = Object.freeze({ min: 32, factor: 4, max: 1000 });

/**
 * Preference facts consulted when a request asks for a choice, and where they join the ranking. The
 * user's newest ones are listed once and kept for `keepMs` (writes through this store drop them at
 * once; another process's writes show within `keepMs`): listing a category scans a large partition
 * (+7 ms in memory, +29 ms over Redis at 100k facts, per request).
 */
const PROFILE = Object.freeze({ facts: 5, share: 0.3, keepMs: 10_000, users: 1000 });

interface Candidate extends SignalCandidate {
  fact: Fact;
}

/** What the signals read from a fact's text, by fact version: searches meet the same facts again and again. */
interface Analysed {
  subject?: string | undefined;
  mentions?: readonly TimeSpan[];
  asks?: number;
}

const ANALYSED_CACHED = 50_000;

const profileKey = (scope: Scope) => `${scope.userId}\u0000${scope.agentId ?? ''}`;

/** Whether the signals read event times for this query: it names a time or asks for one. */
const readsTime = (signals: QuerySignals) => signals.times.length > 0 || signals.when;

/**
 * A FactStore whose `search` re-ranks the store's hits with recall's signals (context, session, entity,
 * time, when, preference, address, question: `search/signals/rerank.ts`): the store finds a pool of candidates with its own
 * (lexical or hybrid) search, and the signals order them. It sits above the store's search, so every
 * backend ranks the same. Two signals read past the pool: a query asking about a relation ("my sister")
 * searches again for the names the pool links to it, and a request for a choice or a recommendation
 * consults the user's preference facts (category `user-preferences`). Everything else is the wrapped
 * store's.
 */
export class RecallFactStore extends DelegatingFactStore {
  readonly #weights: SignalWeights;
  readonly #pool: (limit: number) => number;
  readonly #clock: Clock;
  readonly #analysed = new SizedLru<Analysed>({
    maxSize: ANALYSED_CACHED,
    maxEntries: ANALYSED_CACHED,
    sizeOf: () => 1,
  });
  readonly #profiles = new Map<string, { facts: Fact[]; at: number }>();
  /** Bumped by every write through this store: a listing that a write overlapped is not kept. */
  #writes = 0;

  constructor(store: FactStore, options: RecallSignalOptions = {}) {
    super(store);
    this.#weights = { ...DEFAULT_SIGNAL_WEIGHTS, ...options.weights };
    this.#pool =
      options.pool ??
      ((limit) => Math.min(RECALL_POOL.max, Math.max(RECALL_POOL.min, RECALL_POOL.factor * limit)));
    this.#clock = options.clock ?? systemClock;
  }

  override async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const text = q.query?.trim();
    if (!text) return this.store.search(scope, q);
    const signals = querySignals(text, this.#clock.now());
    const hits = await this.store.search(scope, { ...q, limit: Math.max(q.limit, this.#pool(q.limit)) });
    if (hits.length === 0) return hits;
    const candidates = hits.map((hit) => this.#candidate(hit.fact, hit.score, readsTime(signals)));
    const linked = await this.#addLinked(scope, q, signals, candidates);
    await this.#addProfile(scope, q, signals, candidates);
    return rerankCandidates(candidates, signals, this.#weights, linked)
      .slice(0, q.limit)
      .map(({ candidate, score }) => ({ fact: candidate.fact, score }));
  }

  /**
   * For a query about a relation ("my sister"), the names the candidates link to it ("my sister Anna"),
   * with the facts that name them added to the candidates (below the best, as found by their own search).
   */
  async #addLinked(
    scope: Scope,
    q: ReturnType<typeof FactQuerySchema.parse>,
    signals: QuerySignals,
    candidates: Candidate[],
  ): Promise<string[]> {
    if (this.#weights.entity <= 0 || signals.relations.length === 0) return [];
    const names = [...new Set(candidates.flatMap((c) => linkedNames(c.text, signals.relations)))];
    if (names.length === 0) return [];
    const more = await this.store.search(scope, { ...q, query: names.join(' ') });
    this.#join(candidates, more, 0.5, readsTime(signals));
    return names;
  }

  /** For a request for a choice, the user's newest preference facts join the candidates. */
  async #addProfile(
    scope: Scope,
    q: ReturnType<typeof FactQuerySchema.parse>,
    signals: QuerySignals,
    candidates: Candidate[],
  ): Promise<void> {
    if (this.#weights.preference <= 0 || !signals.choice) return;
    if (q.category && !categoryMatches(PREFERENCE_CATEGORY, q.category)) return;
    const profile = await this.#profile(scope);
    const facts = profile.filter((f) => hasAllTags(f.tags, q.tags)).slice(0, PROFILE.facts);
    this.#join(
      candidates,
      facts.map((fact) => ({ fact, score: 1 })),
      PROFILE.share,
      readsTime(signals),
    );
  }

  /** The user's newest preference facts (kept for `PROFILE.keepMs`, dropped by a write through this store). */
  async #profile(scope: Scope): Promise<Fact[]> {
    const key = profileKey(scope);
    const now = this.#clock.now();
    const kept = this.#profiles.get(key);
    if (kept && now - kept.at >= 0 && now - kept.at < PROFILE.keepMs) return kept.facts;
    const writes = this.#writes;
    const facts = await this.store.list(scope, {
      category: PREFERENCE_CATEGORY,
      order: 'updated',
      limit: PROFILE.facts * 4,
    });
    if (writes === this.#writes) {
      this.#profiles.delete(key);
      this.#profiles.set(key, { facts, at: now });
      if (this.#profiles.size > PROFILE.users) this.#profiles.delete(this.#profiles.keys().next().value!);
    }
    return facts;
  }

  /** Runs a write and forgets the kept profiles (all of them: a restore or an erasure names no scope). */
  async #writing<T>(write: () => Promise<T>): Promise<T> {
    this.#writes += 1;
    try {
      return await write();
    } finally {
      this.#writes += 1;
      this.#profiles.clear();
    }
  }

  override create(scope: Scope, input: FactInput): Promise<Fact> {
    return this.#writing(() => this.store.create(scope, input));
  }

  override update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    return this.#writing(() => this.store.update(scope, id, patch, options));
  }

  override delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    return this.#writing(() => this.store.delete(scope, id, options));
  }

  override restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return this.#writing(() => this.store.restore(snapshot, options));
  }

  override eraseUser(userId: string): Promise<string[]> {
    return this.#writing(() => this.store.eraseUser(userId));
  }

  /**
   * A fact as the signals see it. Its text is what the signals read (title and content); its event time is
   * read only for a query that names or asks for a time; its subject, time mentions and question share are cached per fact version.
   */
  #candidate(fact: Fact, score: number, timed: boolean): Candidate {
    const text = fact.title === undefined ? fact.content : `${fact.title}\n${fact.content}`;
    const time = timed ? Date.parse(fact.eventTime ?? fact.createdAt) : undefined;
    const analysed = () => {
      const key = `${fact.userId}\u0000${fact.agentId ?? ''}\u0000${fact.id}\u0000${fact.version}`;
      let found = this.#analysed.get(key);
      if (!found) {
        found = {};
        this.#analysed.set(key, found);
      }
      return found;
    };
    return {
      fact,
      score,
      text,
      time,
      mentions: () => {
        const found = analysed();
        found.mentions ??= timeSpans(text, time ?? Date.parse(fact.eventTime ?? fact.createdAt));
        return found.mentions;
      },
      subject: () => {
        const found = analysed();
        if (!('subject' in found)) found.subject = subjectOf(text);
        return found.subject;
      },
      asks: () => {
        const found = analysed();
        found.asks ??= questionShare(text);
        return found.asks;
      },
      session: fact.provenance.sessionId,
      turn: fact.provenance.turn,
      preference: categoryMatches(fact.category, PREFERENCE_CATEGORY),
    };
  }

  /** Hits not among the candidates yet join them, scaled so their best scores `share` × the best candidate. */
  #join(candidates: Candidate[], hits: readonly FactHit[], share: number, timed: boolean): void {
    const have = new Set(candidates.map((c) => c.fact.id));
    const best = candidates.reduce((m, c) => Math.max(m, c.score), 0);
    const top = hits.reduce((m, h) => Math.max(m, h.score), 0) || 1;
    for (const hit of hits) {
      if (have.has(hit.fact.id)) continue;
      candidates.push(this.#candidate(hit.fact, (share * best * hit.score) / top, timed));
    }
  }
}

/** `store` with recall's signals re-ranking its search (see {@link RecallFactStore}). */
export function withRecallSignals(store: FactStore, options?: RecallSignalOptions): FactStore {
  return new RecallFactStore(store, options);
}
