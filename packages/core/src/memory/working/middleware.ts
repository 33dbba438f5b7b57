import type { Scope } from '../../foundation/scope.js';
import { type ChatMessage, countMessageTokens } from '../../model/messages.js';
import type { DroppedItem, PrefetchContext, PromptMiddleware } from '../../runtime/middleware.js';
import type { WorkingEntryInfo } from '../../store/working/record.js';
import type { WorkingMemoryStore } from '../../store/working/store.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { inventoryLine, OWN_INVENTORY_HEADER, PATROL_FINDINGS_HEADER, renderInventory } from './format.js';

export const WORKING_MEMORY_MIDDLEWARE = 'working-memory';

export interface WorkingMemoryMiddlewareOptions {
  store: WorkingMemoryStore;
  namespace: (scope: Readonly<Scope>) => string;
  /** Whether to add the patrol findings section (user sessions). */
  isUserSession: (namespace: string) => boolean;
  patrolPrefix: string;
  maxListed: number;
  clock?: { now(): number };
}

interface Section {
  message: ChatMessage | undefined;
  included: number;
  dropped: DroppedItem[];
}

/**
 * The working-memory inventory: one system message listing the own namespace's live entries
 * (keys, time left, category, tags — never values), and in user sessions a second one listing what patrol
 * tasks stored. Within the allotted tokens the own inventory comes first; in each section the newest
 * entries are kept when not all fit (the rest dropped with reason `budget`, past `maxListed` with `limit`),
 * shown oldest first. Empty sections add no message.
 */
export function workingMemoryMiddleware(options: WorkingMemoryMiddlewareOptions): PromptMiddleware {
  /** Both inventories, read at once: one round trip, not two, on a networked store. */
  const load = (ctx: PrefetchContext) => {
    const namespace = options.namespace(ctx.scope);
    return Promise.all([
      options.store.list(ctx.scope, namespace),
      options.isUserSession(namespace) ? options.store.list(ctx.scope, options.patrolPrefix) : undefined,
    ]);
  };
  return {
    name: WORKING_MEMORY_MIDDLEWARE,
    placement: 'system',
    prefetch: load,
    async inject(ctx) {
      const now = (options.clock ?? ctx.clock).now();
      const [ownEntries, findings] = await ((ctx.prefetched as ReturnType<typeof load> | undefined) ??
        load(ctx));
      const own = section(
        ctx.tokenizer,
        OWN_INVENTORY_HEADER,
        ownEntries,
        now,
        ctx.maxTokens,
        options.maxListed,
      );
      const sections = [own];
      if (findings) {
        const used = own.message ? countMessageTokens(ctx.tokenizer, own.message) : 0;
        sections.push(
          section(
            ctx.tokenizer,
            PATROL_FINDINGS_HEADER,
            findings,
            now,
            ctx.maxTokens - used,
            options.maxListed,
          ),
        );
      }
      return {
        messages: sections.flatMap((s) => (s.message ? [s.message] : [])),
        included: sections.reduce((sum, s) => sum + s.included, 0),
        dropped: sections.flatMap((s) => s.dropped),
      };
    },
  };
}

/**
 * Fit one inventory into `maxTokens`. Lines are costed one by one (BPE merges across a line break only
 * save tokens, so the sum errs on the safe side); the final message is counted exactly and trimmed.
 */
function section(
  tokenizer: Tokenizer,
  header: string,
  entries: readonly WorkingEntryInfo[],
  now: number,
  maxTokens: number,
  maxListed: number,
): Section {
  if (entries.length === 0) return { message: undefined, included: 0, dropped: [] };
  const render = (kept: readonly { line: string }[]): ChatMessage => ({
    role: 'system',
    content: renderInventory(
      header,
      kept.map((k) => k.line),
    ),
  });
  const dropped: DroppedItem[] = [];
  // Newest first: the entries just written are the ones the current work is about.
  const candidates = [...entries].reverse().map((entry) => ({ entry, line: inventoryLine(entry, now) }));
  for (const { entry } of candidates.splice(maxListed)) dropped.push({ id: entry.key, reason: 'limit' });
  const kept: typeof candidates = [];
  let used = countMessageTokens(tokenizer, render([]));
  for (const candidate of candidates) {
    const cost = tokenizer.count(candidate.line) + 1;
    if (used + cost <= maxTokens) {
      kept.push(candidate);
      used += cost;
    } else dropped.push({ id: candidate.entry.key, reason: 'budget', tokens: cost });
  }
  while (kept.length > 0 && countMessageTokens(tokenizer, render([...kept].reverse())) > maxTokens) {
    const last = kept.pop()!;
    dropped.push({ id: last.entry.key, reason: 'budget', tokens: tokenizer.count(last.line) + 1 });
  }
  if (kept.length === 0) return { message: undefined, included: 0, dropped };
  return { message: render(kept.reverse()), included: kept.length, dropped };
}
