import { z } from 'zod';
import { LIMITS } from '../../../foundation/limits.js';
import { CategorySchema, type Metadata } from '../../../foundation/record-fields.js';
import type { Scope } from '../../../foundation/scope.js';
import { parseOrThrow } from '../../../foundation/validation.js';
import { coverage, queryTerms, recordCoverage, relevance } from '../../../search/relevance.js';
import type { DetailStore } from '../../../store/details/store.js';
import { type Fact, factSearchText } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import { formatMemoryRef } from '../../offload/ref.js';
import { detailSource, sourceLabel } from '../../trust/fence.js';
import { isQuarantined, markUntrusted } from '../../trust/quarantine.js';
import { splitUserWords } from '../../trust/user-words.js';
import { factMemoryType, isFactMemoryType, type MemorySearchResult, type RankedMemories } from './types.js';

export const RELEVANT_MEMORY_DEFAULTS = Object.freeze({
  autoRetrieve: true,
  autoStore: true,
  relevanceThreshold: 0.7,
  maxMemories: 5,
  interactionCategory: 'episodic/interactions',
});

const ManagerOptionsSchema = z.object({
  autoRetrieve: z.boolean().default(RELEVANT_MEMORY_DEFAULTS.autoRetrieve),
  autoStore: z.boolean().default(RELEVANT_MEMORY_DEFAULTS.autoStore),
  relevanceThreshold: z.number().min(0).max(1).default(RELEVANT_MEMORY_DEFAULTS.relevanceThreshold),
  maxMemories: z.number().int().min(1).max(100).default(RELEVANT_MEMORY_DEFAULTS.maxMemories),
  interactionCategory: CategorySchema.default(RELEVANT_MEMORY_DEFAULTS.interactionCategory),
});

const RetrieveOptionsSchema = z.object({
  types: z.array(z.string().min(1).max(50)).max(20).optional(),
  threshold: z.number().min(0).max(1).optional(),
  max: z.number().int().min(1).max(100).optional(),
});

export interface RelevantMemoryOptions {
  /** Where memories (and stored interactions) live. */
  facts: FactStore;
  /** Also search offloaded details (two-layer memory); they come back as MemoryRefs, not full content. */
  details?: DetailStore;
  /** Inject relevant memories before each turn (the feature's middleware). Default true. */
  autoRetrieve?: boolean;
  /** Store each user/assistant exchange after the turn (the feature's afterTurn). Default true. */
  autoStore?: boolean;
  /** Minimum normalized relevance, 0–1 (default 0.7). */
  relevanceThreshold?: number;
  /** Memories returned at most (default 5). */
  maxMemories?: number;
  /** Category of stored interactions (default `episodic/interactions`). */
  interactionCategory?: string;
}

export interface RetrieveOptions {
  /** Only these memory types (`episodic`, `semantic`, … for facts; detail types such as `tool_output`). */
  types?: string[];
  threshold?: number;
  max?: number;
}

type MessageLike = string | { content: string };

const InteractionSchema = z.object({
  user: z.string().trim().min(1, 'the user message is empty'),
  assistant: z.string().trim().min(1, 'the assistant message is empty'),
});

/**
 * Relevant memory: retrieves the memories relevant to a query and stores user/assistant
 * exchanges as episodic facts. Usable on its own (pass the scope) or as a turn feature via `relevantMemory()`.
 */
export class RelevantMemory {
  readonly facts: FactStore;
  readonly details: DetailStore | undefined;
  /** Switches read by the feature on every turn; flip them at run time. */
  autoRetrieve: boolean;
  autoStore: boolean;
  readonly relevanceThreshold: number;
  readonly maxMemories: number;
  readonly interactionCategory: string;

  constructor(options: RelevantMemoryOptions) {
    const { facts, details, ...rest } = options;
    const o = parseOrThrow(ManagerOptionsSchema, rest, "factMemory({ mode: 'relevant' }) options");
    this.facts = facts;
    this.details = details;
    this.autoRetrieve = o.autoRetrieve;
    this.autoStore = o.autoStore;
    this.relevanceThreshold = o.relevanceThreshold;
    this.maxMemories = o.maxMemories;
    this.interactionCategory = o.interactionCategory;
  }

  /** The memories relevant to `query`, most relevant first: at most `max`, none below `threshold`. */
  async retrieveContext(
    scope: Scope,
    query: string,
    options: RetrieveOptions = {},
  ): Promise<MemorySearchResult[]> {
    return (await this.rank(scope, query, options)).selected;
  }

  /** Like `retrieveContext`, but also returns the candidates left out (for ledgers and debugging). */
  async rank(scope: Scope, query: string, options: RetrieveOptions = {}): Promise<RankedMemories> {
    const o = parseOrThrow(RetrieveOptionsSchema, options, 'retrieve options');
    const threshold = o.threshold ?? this.relevanceThreshold;
    const max = o.max ?? this.maxMemories;
    const text = query.slice(0, LIMITS.queryChars);
    const terms = queryTerms(text);
    if (terms.size === 0) return { selected: [], belowThreshold: [], overLimit: [] };
    // Over-fetch so the type filter and the threshold still leave `max` candidates to choose from.
    const limit = Math.min(100, max * 4);
    const wanted = o.types ? new Set(o.types) : undefined;
    const candidates: MemorySearchResult[] = [];
    // The two searches are independent: side by side, a database store sends their statements together
    // (on PostgreSQL a turn waits on two round trips fewer).
    const [factHits, detailHits] = await Promise.all([
      !wanted || [...wanted].some(isFactMemoryType)
        ? this.facts.search(scope, { query: text, limit })
        : undefined,
      this.details && (!wanted || [...wanted].some((t) => !isFactMemoryType(t)))
        ? this.details.search(scope, { query: text, limit })
        : undefined,
    ]);
    if (factHits) {
      const hits = factHits;
      const best = hits[0]?.score ?? 0;
      for (const { fact, score } of hits) {
        if (isQuarantined(fact)) continue;
        candidates.push(
          this.#fromFact(fact, score, relevance(score, best, recordCoverage(terms, fact, factSearchText))),
        );
      }
    }
    if (detailHits) {
      const hits = detailHits;
      const best = hits[0]?.score ?? 0;
      for (const { detail, score } of hits) {
        const searchable = [detail.description, detail.summary ?? '', detail.content].join('\n');
        const ref = formatMemoryRef({
          id: detail.id,
          description: detail.description,
          tokens: detail.tokenCount,
        });
        candidates.push({
          id: detail.id,
          source: 'detail',
          from: detailSource(detail),
          type: detail.type,
          content: detail.summary ? `${ref} Summary: ${detail.summary}` : ref,
          score,
          relevance: relevance(score, best, coverage(terms, searchable)),
          createdAt: detail.createdAt,
        });
      }
    }
    const ranked = candidates
      .filter((c) => !wanted || wanted.has(c.type))
      .sort((a, b) => b.relevance - a.relevance);
    const result: RankedMemories = { selected: [], belowThreshold: [], overLimit: [] };
    for (const c of ranked) {
      if (c.relevance < threshold) result.belowThreshold.push(c);
      else if (result.selected.length < max) result.selected.push(c);
      else result.overLimit.push(c);
    }
    return result;
  }

  /** Store one exchange as `User: …\nAssistant: …`, an episodic fact with the session as provenance. */
  async storeInteraction(
    scope: Scope,
    user: MessageLike,
    assistant: MessageLike,
    options: { metadata?: Metadata } = {},
  ): Promise<Fact> {
    const m = parseOrThrow(
      InteractionSchema,
      {
        user: typeof user === 'string' ? user : user.content,
        assistant: typeof assistant === 'string' ? assistant : assistant.content,
      },
      'interaction',
    );
    return this.facts.create(scope, {
      content: `User: ${m.user}\nAssistant: ${m.assistant}`,
      category: this.interactionCategory,
      tags: ['interaction'],
      metadata: options.metadata ?? {},
      // Both halves are stored, so both are checked: the answer may repeat a tool's output, and the user's
      // message may carry a paste; the user's own sentences answer for what they ordered themselves.
      provenance: markUntrusted(
        {
          source: 'assistant',
          ...(scope.threadId ? { sessionId: scope.threadId } : {}),
          note: 'user/assistant exchange stored by fact memory (relevant mode)',
        },
        // What the user carried is read once more on its own lines, as a model reads a quote's text.
        `${m.user}\n${splitUserWords(m.user).carried}\n${m.assistant}`,
        { userText: m.user },
      ),
    });
  }

  #fromFact(fact: Fact, score: number, rel: number): MemorySearchResult {
    return {
      id: fact.id,
      source: 'fact',
      from: sourceLabel(fact.provenance),
      type: factMemoryType(fact.category),
      content: fact.content,
      score,
      relevance: rel,
      createdAt: fact.createdAt,
    };
  }
}
