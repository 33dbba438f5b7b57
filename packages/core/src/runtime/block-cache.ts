import type { Scope } from '../foundation/scope.js';
import type { Tokenizer } from '../tokens/tokenizer.js';
import type { MiddlewareResult } from './middleware.js';

interface Entry {
  tokenizer: Tokenizer;
  limit: number;
  mark: string;
  result: MiddlewareResult;
}

/** Owners (user and agent) whose last block is kept; past it the least recently built goes. */
const MAX_OWNERS = 1000;

/**
 * A middleware's last block per user and agent (never shared between them), reused while what it was
 * built from is unchanged: the same `mark` (read from the store this turn, so a write by another process
 * shows), the same token limit and tokenizer. Each hit hands out fresh arrays and messages, so a caller
 * changing them changes no later turn.
 */
export class BlockCache {
  readonly #entries = new Map<string, Entry>();

  get(scope: Scope, tokenizer: Tokenizer, limit: number, mark: string): MiddlewareResult | undefined {
    const entry = this.#entries.get(ownerKey(scope));
    if (!entry || entry.tokenizer !== tokenizer || entry.limit !== limit || entry.mark !== mark) {
      return undefined;
    }
    return copy(entry.result);
  }

  set(scope: Scope, tokenizer: Tokenizer, limit: number, mark: string, result: MiddlewareResult): void {
    const key = ownerKey(scope);
    this.#entries.delete(key);
    this.#entries.set(key, { tokenizer, limit, mark, result: copy(result) });
    if (this.#entries.size > MAX_OWNERS) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

function ownerKey(scope: Scope): string {
  return JSON.stringify([scope.userId, scope.agentId ?? null]);
}

function copy(result: MiddlewareResult): MiddlewareResult {
  return {
    ...result,
    messages: result.messages.map((m) => ({ ...m })),
    dropped: result.dropped.map((d) => ({ ...d })),
    ...(result.includedIds ? { includedIds: [...result.includedIds] } : {}),
    ...(result.injectedFacts ? { injectedFacts: result.injectedFacts.map((f) => ({ ...f })) } : {}),
    ...(result.shown ? { shown: result.shown.map((r) => ({ ...r })) } : {}),
    ...(result.notes ? { notes: [...result.notes] } : {}),
  };
}
