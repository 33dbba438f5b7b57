import { BlockCache } from '../../../runtime/block-cache.js';
import { LineFitter, type LineItem } from '../../../runtime/fit-lines.js';
import type { DroppedItem, MiddlewareResult, PromptMiddleware } from '../../../runtime/middleware.js';
import type { Fact } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import type { Tokenizer } from '../../../tokens/tokenizer.js';
import { isQuarantined } from '../../trust/quarantine.js';
import { readFactBlockMark } from './block-mark.js';
import { FACT_BLOCK_FRAME, factLine, renderFactBlock } from './format.js';

export const FACTS_MIDDLEWARE = 'facts';

/** Facts read per store call; a 2k-token block holds about a hundred typical facts. */
const PAGE = 128;

/** The ledger's id for the facts never read because the block was full before their page came. */
export const UNREAD_FACTS = 'unread-facts';

/** A fact's line with the version it shows (the block's `injectedFacts`). */
interface FactLineItem extends LineItem {
  version: number;
}

interface CachedLine {
  id: string;
  provenance: Fact['provenance'];
  title: string | undefined;
  content: string;
  item: FactLineItem;
}

export interface AllFactsMiddlewareOptions {
  store: FactStore;
  maxTokens?: number;
  showIds: boolean;
}

/**
 * Injects the user's facts as one `[DYNAMIC_MEMORY]` system message,
 * newest-updated first, within min(allotted tokens, `maxTokens`). Facts read that do not fit are dropped
 * with reason `budget`, one by one; the facts never read (the block was full first) are one ledger entry
 * `{ id: 'unread-facts', reason: 'budget', count }`. No facts, or none that fit, means no message.
 */
export function allFactsMiddleware(options: AllFactsMiddlewareOptions): PromptMiddleware {
  // Each fact's line and its token cost, per tokenizer and fact record, so a turn over 10k+ facts does
  // not rebuild every line. Stored facts are immutable records (an update is a new object); a cached
  // line is still checked against the fact's id, title and content (string identity, cheap) in case a
  // store mutates its records in place. A stale count would only skew the estimate, never the limit:
  // the fitter counts the final message exactly.
  const cache = new WeakMap<Tokenizer, WeakMap<Fact, CachedLine>>();
  const itemOf = (tokenizer: Tokenizer, fact: Fact): FactLineItem => {
    let byFact = cache.get(tokenizer);
    if (!byFact) {
      byFact = new WeakMap();
      cache.set(tokenizer, byFact);
    }
    const cached = byFact.get(fact);
    if (
      cached !== undefined &&
      cached.id === fact.id &&
      cached.provenance === fact.provenance &&
      cached.title === fact.title &&
      cached.content === fact.content &&
      cached.item.version === fact.version
    ) {
      return cached.item;
    }
    const line = factLine(fact, options.showIds);
    const item: FactLineItem = { id: fact.id, line, tokens: tokenizer.count(line), version: fact.version };
    byFact.set(fact, {
      id: fact.id,
      provenance: fact.provenance,
      title: fact.title,
      content: fact.content,
      item,
    });
    return item;
  };

  // The last block built per user (and agent): reused while the store's mark and the limit are the same.
  const blocks = new BlockCache();

  return {
    name: FACTS_MIDDLEWARE,
    placement: 'system',
    prefetch: (ctx) => readFactBlockMark(options.store, ctx.scope),
    async inject(ctx) {
      const limit = Math.min(ctx.maxTokens, options.maxTokens ?? Number.POSITIVE_INFINITY);
      const mark = await ((ctx.prefetched as Promise<string | undefined> | undefined) ??
        readFactBlockMark(options.store, ctx.scope));
      if (mark === undefined) return build(ctx, limit, false);
      const cached = blocks.get(ctx.scope, ctx.tokenizer, limit, mark);
      if (cached) return cached;
      const result = await build(ctx, limit, true);
      blocks.set(ctx.scope, ctx.tokenizer, limit, mark, result);
      return result;
    },
  };

  async function build(
    ctx: { scope: Parameters<FactStore['list']>[0]; tokenizer: Tokenizer },
    limit: number,
    countBeside: boolean,
  ): Promise<MiddlewareResult> {
    const fitter = new LineFitter<FactLineItem>(ctx.tokenizer, limit, renderFactBlock, FACT_BLOCK_FRAME);
    // Newest-updated first, a page at a time: with thousands of facts only the first pages can fit.
    // The scan stops at the end of the facts, when not one more line could fit, or after a page that
    // added nothing (the block is full for the lines this user has).
    // Ids of the pages before this one, only once a second page is read (one list returns distinct facts).
    let seen: Set<string> | undefined;
    let previous: readonly Fact[] = [];
    const quarantined: DroppedItem[] = [];
    let examined = 0;
    let more = true;
    // The count is needed only when facts are left unread. A block built because the revision moved (a
    // store with many facts, usually) reads it beside the first page, so that on a remote store its round
    // trip overlaps the page's; a failed count surfaces only where it is needed.
    let count: Promise<number> | undefined;
    while (more && !fitter.full) {
      const read = options.store.list(ctx.scope, { order: 'updated', limit: PAGE, offset: examined });
      if (countBeside && examined === 0) {
        count = options.store.count(ctx.scope);
        count.catch(() => {});
      }
      const page = await read;
      if (examined > 0) {
        seen ??= new Set();
        for (const fact of previous) seen.add(fact.id);
      }
      previous = page;
      examined += page.length;
      more = page.length === PAGE;
      let added = false;
      for (const fact of page) {
        // An update between two pages moves a fact to the front: never show it twice.
        if (seen?.has(fact.id)) continue;
        if (isQuarantined(fact)) {
          quarantined.push({ id: fact.id, reason: 'quarantined' });
          continue;
        }
        added = fitter.offer(itemOf(ctx.tokenizer, fact)) || added;
      }
      if (!added) break;
    }
    const block = fitter.finish();
    const dropped = [...quarantined, ...block.dropped];
    if (more) {
      const unread = (await (count ?? options.store.count(ctx.scope))) - examined;
      if (unread > 0) dropped.push({ id: UNREAD_FACTS, reason: 'budget', count: unread });
    }
    return {
      messages: block.message ? [block.message] : [],
      included: block.included.length,
      dropped,
      injectedFacts: block.included.map((item) => ({ id: item.id, version: item.version })),
    };
  }
}
