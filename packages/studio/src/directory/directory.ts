import type { StoreKind } from '../kioku.js';

/** One partition of a store — a user, and one of their agents or none — with what it holds. */
export interface PartitionSummary {
  userId: string;
  agentId?: string;
  /** Records per kind, where the directory can count them without reading records (SQL backends). */
  counts?: Partial<Record<StoreKind, number>>;
}

export interface PartitionPage {
  /** Partitions in the store (matching the filter). */
  total: number;
  partitions: PartitionSummary[];
}

export interface PartitionQuery {
  limit: number;
  offset: number;
  /** Only users whose id starts with this. */
  userPrefix?: string;
}

/**
 * Which users (and agents) a store holds. The store contracts answer every question about one user but
 * none about "who is there", so each backend answers it natively; a candidate for the store contracts.
 */
export interface UserDirectory {
  /** One page of partitions, by user id then agent (no agent first). */
  list(query: PartitionQuery): Promise<PartitionPage>;
  close(): Promise<void>;
}

/** Sort, filter and cut partitions to a page (for directories that find every partition at once). */
export function pageOf(all: Iterable<PartitionSummary>, query: PartitionQuery): PartitionPage {
  const prefix = query.userPrefix ?? '';
  const sorted = [...all]
    .filter((p) => p.userId.startsWith(prefix))
    .sort((a, b) => compare(a.userId, b.userId) || compare(a.agentId ?? '', b.agentId ?? ''));
  return { total: sorted.length, partitions: sorted.slice(query.offset, query.offset + query.limit) };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Collects `(user, agent, kind, count)` rows into partitions; `''` stands for no agent, as in SQL tables.
 * With `counted`, every partition counts those kinds (0 when no row named it).
 */
export class PartitionCounter {
  readonly #byKey = new Map<string, PartitionSummary>();
  readonly #counted: readonly StoreKind[];

  constructor(counted: readonly StoreKind[] = []) {
    this.#counted = counted;
  }

  add(userId: string, agentId: string | null | undefined, kind?: StoreKind, count?: number): void {
    const key = `${userId}\u0000${agentId ?? ''}`;
    let found = this.#byKey.get(key);
    if (!found) {
      found = { userId, ...(agentId ? { agentId } : {}) };
      if (this.#counted.length > 0) found.counts = Object.fromEntries(this.#counted.map((k) => [k, 0]));
      this.#byKey.set(key, found);
    }
    if (kind !== undefined && count !== undefined) {
      found.counts = { ...found.counts, [kind]: (found.counts?.[kind] ?? 0) + count };
    }
  }

  values(): IterableIterator<PartitionSummary> {
    return this.#byKey.values();
  }
}
