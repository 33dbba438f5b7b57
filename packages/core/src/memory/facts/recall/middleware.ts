import { LIMITS } from '../../../foundation/limits.js';
import type { Scope } from '../../../foundation/scope.js';
import { fitLines } from '../../../runtime/fit-lines.js';
import type { DroppedItem, PrefetchContext, PromptMiddleware } from '../../../runtime/middleware.js';
import type { Fact } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import type { SessionStore } from '../../../store/sessions/store.js';
import { isQuarantined } from '../../trust/quarantine.js';
import { RECALL_FRAME, recallLine, renderRecall } from './format.js';
import { InjectedMemoryTracker, type RecalledIds } from './injected.js';

export const FACT_RECALL_MIDDLEWARE = 'fact-recall';

export interface FactRecallMiddlewareOptions {
  store: FactStore;
  sessions: SessionStore;
  maxResults: number;
  fallbackResults: number;
  maxTokens?: number;
}

/** Turns prepared but not yet recorded, per session; bounded in case prepare() is called without record(). */
const MAX_PENDING_TURNS = 1_000;

const sessionKey = (scope: Readonly<Scope>, sessionId: string) =>
  JSON.stringify([scope.userId, scope.agentId ?? null, sessionId]);

/**
 * Fact recall, per turn:
 * 1. search the user's facts with the user message (at most `maxResults`);
 * 2. on the first turn only (turnIndex 0), when the search finds nothing, take the `fallbackResults`
 *    newest facts instead, so the session starts with some memory;
 * 3. leave out facts already recalled in this session (delta injection, reason `already-injected`);
 * 4. inject the rest, best first, as one `[RECALLED_MEMORY]` system message within the
 *    tokens allotted (and `maxTokens`), dropping what does not fit (reason `budget`).
 *
 * Recalled ids are marked as injected in `afterTurn`, once the turn is recorded and only if the model
 * answered at least once (the turn has an assistant message). A turn that is prepared but never
 * recorded, or whose model call failed before any reply, leaves its entries eligible for the next turn:
 * marking them in `inject` would hide them for the rest of the session although no model ever read them.
 */
export function factRecallMiddleware(options: FactRecallMiddlewareOptions): PromptMiddleware {
  const tracker = new InjectedMemoryTracker(options.sessions);
  const pending = new Map<string, { turnIndex: number; ids: string[]; read: RecalledIds }>();

  /** The session's recalled ids and the message's candidates, read side by side. */
  async function load(ctx: PrefetchContext): Promise<{ injected: RecalledIds; candidates: Fact[] }> {
    // A blank query would make the store return its newest facts; that is the fallback's job only.
    const query = ctx.userMessage.trim().slice(0, LIMITS.queryChars);
    const [injected, hits] = await Promise.all([
      tracker.load(ctx.scope, ctx.sessionId),
      query ? options.store.search(ctx.scope, { query, limit: options.maxResults }) : [],
    ]);
    let candidates = hits.map((h) => h.fact);
    if (candidates.length === 0 && ctx.turnIndex === 0 && options.fallbackResults > 0) {
      const newest = await options.store.search(ctx.scope, { limit: options.fallbackResults });
      candidates = newest.map((h) => h.fact);
    }
    return { injected, candidates };
  }

  return {
    name: FACT_RECALL_MIDDLEWARE,
    placement: 'system',
    recall: true,
    prefetch: load,
    async inject(ctx) {
      const key = sessionKey(ctx.scope, ctx.sessionId);
      pending.delete(key);
      const { injected, candidates } = await ((ctx.prefetched as ReturnType<typeof load> | undefined) ??
        load(ctx));
      const dropped: DroppedItem[] = [];
      const fresh: Fact[] = [];
      for (const fact of candidates) {
        // Recalled in an earlier turn, or shown this turn by a feature before this one (mode `all`).
        if (isQuarantined(fact)) dropped.push({ id: fact.id, reason: 'quarantined' });
        else if (injected.has(fact.id) || ctx.injectedFactIds.has(fact.id)) {
          dropped.push({ id: fact.id, reason: 'already-injected' });
        } else fresh.push(fact);
      }
      const versionOf = new Map(fresh.map((fact) => [fact.id, fact.version]));
      const limit = Math.min(ctx.maxTokens, options.maxTokens ?? Number.POSITIVE_INFINITY);
      const items = fresh.map((fact) => ({ id: fact.id, line: recallLine(fact) }));
      const block = fitLines(ctx.tokenizer, items, limit, renderRecall, RECALL_FRAME);
      if (block.included.length > 0) {
        pending.set(key, { turnIndex: ctx.turnIndex, ids: block.included.map((i) => i.id), read: injected });
        for (const oldest of pending.keys()) {
          if (pending.size <= MAX_PENDING_TURNS) break;
          pending.delete(oldest);
        }
      }
      return {
        messages: block.message ? [block.message] : [],
        included: block.included.length,
        dropped: [...dropped, ...block.dropped],
        injectedFacts: block.included.map((item) => ({ id: item.id, version: versionOf.get(item.id)! })),
      };
    },

    async afterTurn(ctx) {
      const key = sessionKey(ctx.scope, ctx.sessionId);
      const turn = pending.get(key);
      if (!turn || turn.turnIndex !== ctx.turnIndex) return;
      pending.delete(key);
      if (!ctx.messages.some((m) => m.role === 'assistant')) return;
      await tracker.add(ctx.scope, ctx.sessionId, turn.ids, turn.read);
    },
  };
}
