import type { Scope } from '../../../foundation/scope.js';
import type { MiddlewareResult } from '../../../runtime/middleware.js';
import type { Fact } from '../../../store/facts/record.js';
import type { FactStore } from '../../../store/facts/store.js';
import type { Tokenizer } from '../../../tokens/tokenizer.js';

/**
 * What the fact block of a user depends on, read from the store in two cheap calls: how many facts there
 * are and the newest-updated one. Every write changes it — a create or an edit puts its fact first (with
 * a new version and time), a delete changes the count, a delete and a create together change the first
 * fact — whichever process made it, since it is read from the store every turn. (A write stamped
 * earlier than the newest fact by a clock running behind would not show until the next write.)
 */
export interface BlockMark {
  count: number;
  /** The newest-updated fact as its id, version, times, title and content; '' without facts. */
  head: string;
}

export async function readBlockMark(store: FactStore, scope: Scope): Promise<BlockMark> {
  const [count, first] = await Promise.all([
    store.count(scope),
    store.list(scope, { order: 'updated', limit: 1 }),
  ]);
  return { count, head: first[0] ? headOf(first[0]) : '' };
}

function headOf(fact: Fact): string {
  return JSON.stringify([fact.id, fact.version, fact.updatedAt, fact.createdAt, fact.title, fact.content]);
}

interface Entry {
  tokenizer: Tokenizer;
  limit: number;
  mark: BlockMark;
  result: MiddlewareResult;
}

/** Users whose last block is kept; past it the least recently built goes. */
const MAX_USERS = 1000;

/**
 * The last fact block built per user and agent (never shared between them), reused while its mark, limit
 * and tokenizer are unchanged. Each hit hands out fresh arrays, so a caller changing them changes no
 * later turn.
 */
export class FactBlockCache {
  readonly #entries = new Map<string, Entry>();

  get(scope: Scope, tokenizer: Tokenizer, limit: number, mark: BlockMark): MiddlewareResult | undefined {
    const entry = this.#entries.get(keyOf(scope));
    if (
      !entry ||
      entry.tokenizer !== tokenizer ||
      entry.limit !== limit ||
      entry.mark.count !== mark.count ||
      entry.mark.head !== mark.head
    ) {
      return undefined;
    }
    return copy(entry.result);
  }

  set(scope: Scope, tokenizer: Tokenizer, limit: number, mark: BlockMark, result: MiddlewareResult): void {
    const key = keyOf(scope);
    this.#entries.delete(key);
    this.#entries.set(key, { tokenizer, limit, mark, result: copy(result) });
    if (this.#entries.size > MAX_USERS) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

function keyOf(scope: Scope): string {
  return JSON.stringify([scope.userId, scope.agentId ?? null]);
}

function copy(result: MiddlewareResult): MiddlewareResult {
  return {
    ...result,
    messages: result.messages.map((m) => ({ ...m })),
    dropped: result.dropped.map((d) => ({ ...d })),
    ...(result.injectedFacts ? { injectedFacts: result.injectedFacts.map((f) => ({ ...f })) } : {}),
  };
}
