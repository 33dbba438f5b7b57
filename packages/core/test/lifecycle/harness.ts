import {
  type ChatMessage,
  type ChatModel,
  createInMemoryStores,
  type Fact,
  type KiokuStores,
  type Scope,
  StorageError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing.js';

/** A reply computed when the model is called (to act while a pass is running); may throw. */
export type ScriptedReply = (messages: ChatMessage[]) => unknown;

/**
 * A model that answers JSON (objects are encoded, strings sent as is) and records the prompts it saw. A
 * function in the script is called with the prompt and its (awaited) result is the reply.
 */
export function scriptedJsonModel(replies: unknown[]): ChatModel & { prompts: ChatMessage[][] } {
  const prompts: ChatMessage[][] = [];
  return {
    prompts,
    async complete({ messages }) {
      prompts.push(messages.map((m) => ({ ...m })));
      if (replies.length === 0) throw new Error('model script exhausted');
      const next = replies.shift();
      const reply = typeof next === 'function' ? await (next as ScriptedReply)(messages) : next;
      return {
        role: 'assistant',
        content: typeof reply === 'string' ? reply : JSON.stringify(reply),
        usage: { inputTokens: 100, outputTokens: 10 },
      };
    },
  };
}

export const NOW = Date.UTC(2026, 5, 15, 12);
export const DAY = 24 * 60 * 60 * 1000;
export const alice: Scope = { userId: 'alice' };
export const bob: Scope = { userId: 'bob' };

export function world(): { stores: KiokuStores; clock: ManualClock } {
  const clock = new ManualClock(NOW - 30 * DAY);
  return { stores: createInMemoryStores({ clock }), clock };
}

/** Facts created a day apart (the clock moves), so their createdAt differ; the clock ends at NOW. */
export async function seed(
  stores: KiokuStores,
  clock: ManualClock,
  scope: Scope,
  contents: (
    | string
    | { content: string; category?: string; tags?: string[]; metadata?: Record<string, string> }
  )[],
): Promise<Fact[]> {
  const out: Fact[] = [];
  for (const c of contents) {
    out.push(await stores.facts.create(scope, typeof c === 'string' ? { content: c } : c));
    clock.advance(DAY);
  }
  clock.set(NOW);
  return out;
}

/** Every fact of a scope, in creation order, without fields the store sets on write. */
export async function contentOf(stores: KiokuStores, scope: Scope): Promise<Fact[]> {
  return stores.facts.list(scope, { order: 'oldest' });
}

/** A promise and its resolve, to hold a scripted model (or a job) until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * `store` as a backend that went away: while `down()` says so, the calls `fails` names (every call by
 * default) reject with a retryable StorageError, as an unreachable or restarting server's do.
 */
export function unreachableWhile<T extends object>(
  store: T,
  down: () => boolean,
  fails: (method: string | symbol) => boolean = () => true,
): T {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        down() && fails(property)
          ? Promise.reject(new StorageError('cannot reach the store', { retryable: true }))
          : value.apply(target, args);
    },
  });
}
