import { type Clock, systemClock } from '../../foundation/clock.js';
import { categoryMatches, hasAllTags } from '../../foundation/record-fields.js';
import type { Scope, SnapshotSelector } from '../../foundation/scope.js';
import { SizedLru } from '../../foundation/sized-lru.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { WriteOptions } from '../../foundation/version.js';
import { linkedNames } from '../../search/signals/entities.js';
import { PREFERENCE_CATEGORY } from '../../search/signals/preferences.js';
import {
  DEFAULT_SIGNAL_WEIGHTS,
  type QuerySignals,
  querySignals,
  rerankCandidates,
  type SignalCandidate,
  type SignalWeights,
} from '../../search/signals/rerank.js';
import { type TimeSpan, timeSpans } from '../../search/signals/time.js';
import {
  type CategoryCount,
  type Fact,
  type FactFilter,
  type FactHit,
  type FactInput,
  type FactListOptions,
  type FactPatch,
  type FactQuery,
  FactQuerySchema,
  factSearchText,
} from '../facts/record.js';
import type { FactStore } from '../facts/store.js';
import type { RestoreOptions, RestoreReport, SnapshotEnvelope } from '../snapshot/envelope.js';

export interface RecallSignalOptions {
  /** Weights of the signals (0 turns one off); default {@link DEFAULT_SIGNAL_WEIGHTS}. */
  weights?: Partial<SignalWeights>;
  /**
   * How many of the store's hits the signals re-rank for a search of `limit`: default `max(50, 4 × limit)`,
   * at most 1000. A turn is lifted by the turn before it only when both are among them.
   */
  pool?: (limit: number) => number;
  /** "Now" for a query's relative time expressions ("last week"); default the system clock. */
  clock?: Clock;
}

export const RECALL_POOL = Object.freeze({ min: 50, factor: 4, max: 1000 });

/** Preference facts consulted when a request asks for a choice, and where they join the ranking. */
const PROFILE = Object.freeze({ facts: 5, share: 0.3 });

interface Candidate extends SignalCandidate {
  fact: Fact;
}

/** The times facts' texts name, by fact version: searches meet the same facts again and again. */
const MENTIONS_CACHED = 50_000;

/**
 * A FactStore whose `search` re-ranks the store's hits with recall's signals (context, session, entity,
 * time, preference: `search/signals/rerank.ts`): the store finds a pool of candidates with its own
 * (lexical or hybrid) search, and the signals order them. It sits above the store's search, so every
 * backend ranks the same. Two signals read past the pool: a query asking about a relation ("my sister")
 * searches again for the names the pool links to it, and a request for a choice or a recommendation
 * consults the user's preference facts (category `user-preferences`). Everything else is the wrapped
 * store's.
 */
export class RecallFactStore implements FactStore {
  readonly store: FactStore;
  readonly #weights: SignalWeights;
  readonly #pool: (limit: number) => number;
  readonly #clock: Clock;
  readonly #mentions = new SizedLru<readonly TimeSpan[]>({
    maxSize: MENTIONS_CACHED,
    maxEntries: MENTIONS_CACHED,
    sizeOf: () => 1,
  });

  constructor(store: FactStore, options: RecallSignalOptions = {}) {
    this.store = store;
    this.#weights = { ...DEFAULT_SIGNAL_WEIGHTS, ...options.weights };
    this.#pool =
      options.pool ??
      ((limit) => Math.min(RECALL_POOL.max, Math.max(RECALL_POOL.min, RECALL_POOL.factor * limit)));
    this.#clock = options.clock ?? systemClock;
  }

  get(scope: Scope, id: string): Promise<Fact | null> {
    return this.store.get(scope, id);
  }

  list(scope: Scope, options?: FactListOptions): Promise<Fact[]> {
    return this.store.list(scope, options);
  }

  count(scope: Scope, filter?: FactFilter): Promise<number> {
    return this.store.count(scope, filter);
  }

  create(scope: Scope, input: FactInput): Promise<Fact> {
    return this.store.create(scope, input);
  }

  update(scope: Scope, id: string, patch: FactPatch, options?: WriteOptions): Promise<Fact> {
    return this.store.update(scope, id, patch, options);
  }

  delete(scope: Scope, id: string, options?: WriteOptions): Promise<boolean> {
    return this.store.delete(scope, id, options);
  }

  categories(scope: Scope): Promise<CategoryCount[]> {
    return this.store.categories(scope);
  }

  eraseUser(userId: string): Promise<string[]> {
    return this.store.eraseUser(userId);
  }

  snapshot(selector: SnapshotSelector): Promise<SnapshotEnvelope<Fact>> {
    return this.store.snapshot(selector);
  }

  restore(snapshot: unknown, options?: RestoreOptions): Promise<RestoreReport> {
    return this.store.restore(snapshot, options);
  }

  async search(scope: Scope, query: FactQuery): Promise<FactHit[]> {
    const q = parseOrThrow(FactQuerySchema, query, 'fact query');
    const text = q.query?.trim();
    if (!text) return this.store.search(scope, q);
    const signals = querySignals(text, this.#clock.now());
    const hits = await this.store.search(scope, { ...q, limit: Math.max(q.limit, this.#pool(q.limit)) });
    if (hits.length === 0) return hits;
    const candidates = hits.map((hit) => this.#candidate(hit.fact, hit.score));
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
    this.#join(candidates, more, 0.5);
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
    const profile = await this.store.list(scope, {
      category: PREFERENCE_CATEGORY,
      order: 'updated',
      limit: PROFILE.facts * 4,
    });
    const facts = profile.filter((f) => hasAllTags(f.tags, q.tags)).slice(0, PROFILE.facts);
    this.#join(
      candidates,
      facts.map((fact) => ({ fact, score: 1 })),
      PROFILE.share,
    );
  }

  #candidate(fact: Fact, score: number): Candidate {
    const text = factSearchText(fact);
    const time = Date.parse(fact.eventTime ?? fact.createdAt);
    return {
      fact,
      score,
      text,
      time,
      mentions: () => {
        const key = JSON.stringify([fact.userId, fact.agentId ?? null, fact.id, fact.version]);
        let spans = this.#mentions.get(key);
        if (!spans) {
          spans = timeSpans(text, time);
          this.#mentions.set(key, spans);
        }
        return spans;
      },
      session: fact.provenance.sessionId,
      turn: fact.provenance.turn,
      preference: categoryMatches(fact.category, PREFERENCE_CATEGORY),
    };
  }

  /** Hits not among the candidates yet join them, scaled so their best scores `share` × the best candidate. */
  #join(candidates: Candidate[], hits: readonly FactHit[], share: number): void {
    const have = new Set(candidates.map((c) => c.fact.id));
    const best = candidates.reduce((m, c) => Math.max(m, c.score), 0);
    const top = hits.reduce((m, h) => Math.max(m, h.score), 0) || 1;
    for (const hit of hits) {
      if (have.has(hit.fact.id)) continue;
      candidates.push(this.#candidate(hit.fact, (share * best * hit.score) / top));
    }
  }
}

/** `store` with recall's signals re-ranking its search (see {@link RecallFactStore}). */
export function withRecallSignals(store: FactStore, options?: RecallSignalOptions): FactStore {
  return new RecallFactStore(store, options);
}
