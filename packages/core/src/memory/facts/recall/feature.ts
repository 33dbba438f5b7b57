import { z } from 'zod';
import type { Clock } from '../../../foundation/clock.js';
import { ValidationError } from '../../../foundation/errors.js';
import type { Scope } from '../../../foundation/scope.js';
import { parseOrThrow } from '../../../foundation/validation.js';
import type { ChatModel } from '../../../model/chat-model.js';
import type { MemoryFeature } from '../../../runtime/feature.js';
import { type DedupOption, DedupOptionSchema, resolveDedup } from '../../../store/facts/near-duplicate.js';
import type { Fact } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import type { SessionStore } from '../../../store/sessions/store.js';
import type { BackgroundQueue } from '../../background/queue.js';
import type { ChangesetLog } from '../../changesets/changeset-log.js';
import { EnrichmentOutbox } from '../../enrichment/outbox.js';
import { FACT_RECALL_MIDDLEWARE, factRecallMiddleware } from './middleware.js';
import { factRecallTools } from './toolkit.js';

export interface FactRecallOptions {
  /**
   * The user's facts (shared with mode `all` when both are used). Recall is hybrid when this store
   * is (`withEmbeddings` on the bundle, or `KiokuBuilder`'s `embeddings`).
   */
  store: FactStore;
  /** Where the ids recalled in each session are kept (k-v key `kioku.recall.injected` and its sealed chunks). */
  sessions: SessionStore;
  /** Entries searched per user message, and the most search_memory returns (default 8). */
  maxResults?: number;
  /** Newest entries injected on a session's first turn when the search finds nothing (default 5; 0 = off). */
  fallbackResults?: number;
  /** Most tokens for the block; by default whatever the budget has left. */
  maxTokens?: number;
  /**
   * Dedup before save_memory stores (default on, threshold `DEDUP_THRESHOLD`): `{ threshold }` tunes it,
   * `false` turns it off.
   */
  dedup?: DedupOption;
  /**
   * Expand each memory save_memory saved into focused, well-formed entries in the background (a
   * changeset of pass `enrichment`, kept in the changeset log). Without it, save_memory only saves.
   */
  enrichment?: EnrichmentOptions;
}

/** Background enrichment of save_memory's memories. */
export interface EnrichmentOptions {
  model: ChatModel;
  /** Where the job runs, after the reply (KiokuBuilder hands its queue). */
  background: BackgroundQueue;
  /**
   * Replaces the built-in memory rules (the directive file `memory-rules.md`): the text, or a function read when a
   * job runs (the builder's directive files; undefined keeps the built-in rules).
   */
  directive?: string | (() => Promise<string | undefined>);
  /** Where applied changesets are kept (default: one over `sessions`). */
  changesets?: ChangesetLog;
  /**
   * Where the requests are kept and drained (default: one over `store` and `sessions` with these
   * options; the builder shares its own with `Kioku.runPending` and `kioku worker`).
   */
  outbox?: EnrichmentOutbox;
  clock?: Clock;
}

const OptionsSchema = z.object({
  maxResults: z.number().int().min(1).max(1000).default(8),
  fallbackResults: z.number().int().min(0).max(1000).default(5),
  maxTokens: z.number().int().min(1).optional(),
  dedup: DedupOptionSchema,
});

/**
 * Fact recall (`withFacts({ mode: 'recall' })`): facts recalled by the user message on each turn with
 * delta injection and a first-turn fallback, plus save_memory, search_memory, delete_memory and
 * list_memory_categories. With `enrichment`, each memory save_memory saved is then expanded in the
 * background; the reply never waits for it, and if the model fails the saved memory stays as it is.
 */
export function factRecall(options: FactRecallOptions): MemoryFeature {
  const { maxResults, fallbackResults, maxTokens, dedup } = parseOrThrow(
    OptionsSchema,
    options,
    "factMemory({ mode: 'recall' }) options",
  );
  const { store, enrichment } = options;
  if (enrichment && (!enrichment.model || !enrichment.background)) {
    throw new ValidationError('Enrichment needs a `model` and a `background` queue.');
  }
  const settings = resolveDedup(dedup);
  const outbox = enrichment ? (enrichment.outbox ?? outboxOf(enrichment, options, dedup)) : undefined;
  const onSaved =
    enrichment && outbox
      ? async (scope: Scope, original: Fact) => {
          const { background } = enrichment;
          const owner = {
            userId: scope.userId,
            ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
          };
          // Durable first: a process that dies from here on leaves the request to any drain of the user.
          await outbox.request(owner, original);
          // Refused (the queue is full or closed): the request stays pending in the store for the next drain.
          background.enqueue({
            kind: 'enrichment',
            scope: owner,
            run: async (signal) => {
              const [drain] = (await outbox.drainUser(owner, { signal })).sessions;
              if (!drain) return {};
              if (drain.error !== undefined && drain.results.length === 0) throw drain.error;
              const last = drain.results.at(-1);
              return last
                ? { changeset: last.changeset, ...(last.result ? { result: last.result } : {}) }
                : {};
            },
          });
        }
      : undefined;
  return {
    name: FACT_RECALL_MIDDLEWARE,
    middleware: factRecallMiddleware({
      store,
      sessions: options.sessions,
      maxResults,
      fallbackResults,
      ...(maxTokens === undefined ? {} : { maxTokens }),
    }),
    toolkit: factRecallTools(store, {
      searchResults: maxResults,
      dedup: settings,
      ...(onSaved ? { onSaved } : {}),
    }),
  };
}

function outboxOf(
  enrichment: EnrichmentOptions,
  options: FactRecallOptions,
  dedup: DedupOption | undefined,
): EnrichmentOutbox {
  const { model, directive, changesets, clock } = enrichment;
  return new EnrichmentOutbox({
    stores: { facts: options.store, sessions: options.sessions },
    model,
    dedup: dedup ?? true,
    ...(directive !== undefined ? { directive } : {}),
    ...(changesets ? { changesets } : {}),
    ...(clock ? { clock } : {}),
  });
}
