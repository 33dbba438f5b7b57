import { ConflictError, type Fact, type KiokuStores, type Scope } from '@kioku/core';
import { englishAnalyzer } from '@kioku/core/adapter';
import {
  type CascadeResult,
  type ErasureReceipt,
  type ForgetUserOptions,
  forgetFact,
  forgetUser,
  isQuarantined,
  markUntrusted,
} from '@kioku/core/passes';
import type { Provenance } from '@kioku/core/store';
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import { matchesFilter } from './filter.js';
import { itemText } from './item-text.js';
import { categoryNamespace, itemFactId, namespaceCategory } from './namespace.js';
import { type UserOption, userIdFromConfig, userScope } from './user.js';

/** Who writes what `put` stores: decides whether Kioku's injection detector reads it. */
export type PutSource = 'user' | 'assistant' | 'tool';

export interface KiokuStoreOptions {
  /** The stores to keep items in (`kioku.stores`, or any bundle: in memory, SQLite, PostgreSQL, Redis …). */
  stores: KiokuStores;
  /**
   * Whose memory the store reads and writes: a user id, or a function of the run's `config.configurable`
   * (default: `configurable.user_id`), never what a model wrote. A graph calls its store from LangGraph's
   * batching loop, where the run's config cannot be read: give each run a store bound to its user,
   * `graph.invoke(input, { configurable, store: store.forUser(userId) })`.
   */
  userId?: UserOption;
  /** Partition the user's memory per agent (Kioku's `agentId`). */
  agentId?: string;
  /**
   * Who the items come from. `tool` (default) and `assistant`: the text is read by Kioku's injection
   * detector and an item that reads like instructions to a model is quarantined — kept, but not returned by
   * `get` or `search` until the user confirms it (`kioku.quarantine`). `user`: the app vouches for the
   * text and it is stored as it is.
   */
  source?: PutSource;
  /** The value fields Kioku finds an item by (LangGraph's index paths; default `["$"]`, every field). */
  index?: { fields?: string[] };
  /**
   * Which ranked hits a query returns. `matching` (default): only items whose text holds at least one word
   * of the query (after stemming) — Kioku's lexical ranking also scores, lower, items that share words with
   * the best hits (query expansion), and every item shares its namespace's words. `ranked`: every hit
   * recall returns, as it ranks them; use it with hybrid stores (\`withEmbeddings\`), whose vector half finds
   * items by meaning rather than by word.
   */
  hits?: 'matching' | 'ranked';
}

/** What `forget` removed: the item's fact and whatever Kioku derived from it. */
export interface ItemForgetReceipt extends CascadeResult {
  namespace: string[];
  key: string;
  /** False when there was no such item. */
  found: boolean;
}

/** An item's place among the user's facts: namespace, key and value live in the fact's metadata. */
interface ItemMetadata {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
}

const METADATA_KEY = 'langgraph';
/** How many hits a search with a filter reads before filtering (Kioku's search returns at most 1000). */
const FILTERED_SEARCH_WINDOW = 1000;
/** How many items a search without a query reads at a time. */
const LIST_PAGE = 100;

/**
 * LangGraph's `BaseStore` over Kioku's stores: `graph.compile({ store })`, `createReactAgent({ store })`
 * and every node's `config.store` read and write the user's Kioku memory.
 *
 * - An item is a fact of the user (from the app's config, see `userId`): its namespace is the fact's
 *   category (under `langgraph/`), its value is kept exactly in the fact's metadata, and the text of its
 *   indexed fields is the fact's content — so Kioku's fact block, recall and memory tools see it too.
 * - `search` with a query is Kioku's recall over the namespace prefix (lexical, or hybrid when the stores
 *   carry embeddings): ranked hits that match the query, not every item. Without a query, items come
 *   oldest first.
 * - `put` goes through Kioku's trust checks (see `source`). `delete` removes the fact; `forget` also
 *   removes what was derived from it and returns a receipt; `forgetUser` erases everything of a user.
 */
export class KiokuStore extends BaseStore {
  readonly stores: KiokuStores;
  readonly #user: UserOption;
  readonly #agentId: string | undefined;
  readonly #source: PutSource;
  readonly #fields: readonly string[];
  readonly #hits: 'matching' | 'ranked';

  constructor(options: KiokuStoreOptions) {
    super();
    this.stores = options.stores;
    this.#user = options.userId ?? userIdFromConfig;
    this.#agentId = options.agentId;
    this.#source = options.source ?? 'tool';
    this.#fields = options.index?.fields ?? ['$'];
    this.#hits = options.hits ?? 'matching';
  }

  /** The same store bound to one user (for code that runs outside a graph: scripts, tests, a back office). */
  forUser(userId: string): KiokuStore {
    return new KiokuStore({
      stores: this.stores,
      userId,
      source: this.#source,
      index: { fields: [...this.#fields] },
      hits: this.#hits,
      ...(this.#agentId === undefined ? {} : { agentId: this.#agentId }),
    });
  }

  /** The scope of this call: the user from the options or the run's config. */
  scope(): Scope {
    return userScope(this.#user, this.#agentId);
  }

  async batch<Op extends readonly Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const scope = this.scope();
    // Like LangGraph's own stores: reads see the state before the batch's writes, and of several writes
    // to one item the last one counts.
    const puts = new Map<string, PutOperation>();
    const results: unknown[] = [];
    for (const op of operations) {
      if ('value' in op) {
        puts.set(itemFactId(op.namespace, op.key), op);
        results.push(null); // what LangGraph's own stores answer for a put
      } else if ('namespacePrefix' in op) results.push(await this.#search(scope, op));
      else if ('matchConditions' in op || 'maxDepth' in op || !('key' in op))
        results.push(await this.#listNamespaces(scope, op as ListNamespacesOperation));
      else results.push(await this.#get(scope, op as GetOperation));
    }
    for (const op of puts.values()) await this.#put(scope, op);
    return results as OperationResults<Op>;
  }

  /**
   * Forget one item: its fact, what Kioku derived from it (enrichments, merges) and their vectors, with
   * the content put on the user's suppression list so extraction does not learn it again. The receipt
   * names every id removed.
   */
  async forget(namespace: string[], key: string): Promise<ItemForgetReceipt> {
    const scope = this.scope();
    const id = itemFactId(namespace, key);
    const found = (await this.stores.facts.get(scope, id)) !== null;
    const removed = found
      ? await forgetFact(this.stores, scope, id)
      : { facts: [], sessions: [], plans: [], details: [] };
    return { namespace, key, found, ...removed };
  }

  /**
   * Erase everything Kioku keeps of the user — every item of every namespace, and the rest of their
   * memory (sessions, facts, documents, vectors) — and return Kioku's erasure receipt, verified by a scan.
   */
  forgetUser(userId = this.scope().userId, options: ForgetUserOptions = {}): Promise<ErasureReceipt> {
    return forgetUser(this.stores, userId, options);
  }

  async #get(scope: Scope, op: GetOperation): Promise<Item | null> {
    const fact = await this.stores.facts.get(scope, itemFactId(op.namespace, op.key));
    return fact && !isQuarantined(fact) ? toItem(fact) : null;
  }

  async #put(scope: Scope, op: PutOperation): Promise<void> {
    const id = itemFactId(op.namespace, op.key);
    if (op.value === null) {
      await this.stores.facts.delete(scope, id);
      return;
    }
    const category = namespaceCategory(op.namespace);
    const content = itemText(op.key, op.value, op.index ?? this.#fields);
    const metadata = { [METADATA_KEY]: { namespace: op.namespace, key: op.key, value: op.value } };
    const base: Provenance =
      this.#source === 'user' ? { source: 'user' } : { source: this.#source, toolName: 'langgraph.store' };
    const provenance = markUntrusted(base, content);
    const patch = { content, category, metadata, provenance };
    // Create first: most puts write a new key (one store call); an existing one is updated instead.
    try {
      await this.stores.facts.create(scope, { id, ...patch });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      await this.stores.facts.update(scope, id, patch);
    }
  }

  async #search(scope: Scope, op: SearchOperation): Promise<SearchItem[]> {
    const category = namespaceCategory(op.namespacePrefix);
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const keep = (fact: Fact) => !isQuarantined(fact) && matchesFilter(itemOf(fact).value, op.filter);
    if (op.query?.trim()) {
      const wanted = op.filter
        ? FILTERED_SEARCH_WINDOW
        : Math.min(FILTERED_SEARCH_WINDOW, offset + limit + 8);
      const hits = await this.stores.facts.search(scope, { query: op.query, category, limit: wanted });
      const terms = new Set(englishAnalyzer.terms(op.query));
      const holdsTerm = (fact: Fact) =>
        this.#hits === 'ranked' || englishAnalyzer.terms(fact.content).some((term) => terms.has(term));
      return hits
        .filter((hit) => keep(hit.fact) && holdsTerm(hit.fact))
        .slice(offset, offset + limit)
        .map((hit) => ({ ...toItem(hit.fact), score: hit.score }));
    }
    // Pages of the namespace's items, oldest first, until offset + limit of them are kept: without a
    // filter (or with one that matches often) one page; a filter that matches rarely reads further.
    const kept: Fact[] = [];
    const page = Math.max(LIST_PAGE, offset + limit);
    for (let at = 0; kept.length < offset + limit; at += page) {
      const facts = await this.stores.facts.list(scope, {
        category,
        order: 'oldest',
        limit: page,
        offset: at,
      });
      kept.push(...facts.filter(keep));
      if (facts.length < page) break;
    }
    return kept.slice(offset, offset + limit).map(toItem);
  }

  async #listNamespaces(scope: Scope, op: ListNamespacesOperation): Promise<string[][]> {
    const categories = await this.stores.facts.categories(scope);
    let namespaces = categories
      .filter((c) => c.count > 0)
      .map((c) => categoryNamespace(c.category))
      .filter((ns): ns is string[] => ns !== undefined);
    const conditions = op.matchConditions ?? [];
    namespaces = namespaces.filter((ns) => conditions.every((condition) => matches(condition, ns)));
    if (op.maxDepth !== undefined) {
      const seen = new Map<string, string[]>();
      for (const ns of namespaces) {
        const cut = ns.slice(0, op.maxDepth);
        seen.set(JSON.stringify(cut), cut);
      }
      namespaces = [...seen.values()];
    }
    namespaces.sort((a, b) => a.join(':').localeCompare(b.join(':')));
    const offset = op.offset ?? 0;
    return namespaces.slice(offset, offset + (op.limit ?? namespaces.length));
  }
}

function matches(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > namespace.length) return false;
  const start = matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === '*' || namespace[start + i] === label);
}

function itemOf(fact: Fact): ItemMetadata {
  return fact.metadata[METADATA_KEY] as unknown as ItemMetadata;
}

function toItem(fact: Fact): Item {
  const { namespace, key, value } = itemOf(fact);
  return {
    namespace,
    key,
    value,
    createdAt: new Date(fact.createdAt),
    updatedAt: new Date(fact.updatedAt),
  };
}
