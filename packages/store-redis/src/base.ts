import { type Clock, type StoreKind, ValidationError } from '@kioku/core';
import { makeEnvelope, parseOrThrow, planRestore, type RestoreSpec, systemClock } from '@kioku/core/adapter';
import {
  type RestoreOptions,
  type RestoreReport,
  type SnapshotEnvelope,
  type SnapshotSelector,
  SnapshotSelectorSchema,
} from '@kioku/core/store';
import { type Multi, RedisConnection, type RedisConnectionOptions, type SetupReport } from './connection.js';
import type { PartitionAddress } from './keys.js';

type RecordSchema<R> = Parameters<typeof planRestore<R>>[1];

export interface RedisStoreOptions extends RedisConnectionOptions {
  /** A connection shared with other stores (see `createRedisStores`); instead of `url` / `client`. */
  connection?: RedisConnection;
  /** Time source for timestamps and expiry decisions (default: the system clock). */
  clock?: Clock;
}

/** A partition found by SCAN, with the rest of its key. */
export interface FoundPartition extends PartitionAddress {
  key: string;
  rest: string;
}

/** The connection and clock every Redis store shares; `setup()`, `close()`, snapshot and restore plumbing. */
export abstract class RedisStoreBase {
  protected readonly connection: RedisConnection;
  protected readonly clock: Clock;

  constructor(options: RedisStoreOptions) {
    if (options.connection && (options.url !== undefined || options.client !== undefined)) {
      throw new ValidationError('Give `connection`, or `url` / `client`, not both.');
    }
    this.connection = options.connection ?? new RedisConnection(options);
    this.clock = options.clock ?? systemClock;
  }

  /** Optional: check that the server is reachable and is Redis 7 or later. Nothing needs creating. */
  setup(): Promise<SetupReport> {
    return this.connection.setup();
  }

  /** Quit the Redis client if this store opened it (for every store sharing the connection). */
  close(): Promise<void> {
    return this.connection.close();
  }

  protected get keys() {
    return this.connection.keys;
  }

  /**
   * Partitions of `kind` (one user's or everyone's) whose key ends in `suffix`, by SCAN, sorted by user
   * and agent so snapshots come out in a stable order.
   */
  protected async partitionsOf(
    kind: StoreKind,
    suffix: string,
    userId: string | undefined,
  ): Promise<FoundPartition[]> {
    const found: FoundPartition[] = [];
    for (const key of await this.connection.scan(this.keys.pattern(kind, suffix, userId))) {
      const parsed = this.keys.parse(kind, key);
      if (!parsed || (userId !== undefined && parsed.userId !== userId)) continue;
      found.push({ ...parsed, key });
    }
    const label = (p: FoundPartition) => [p.userId, p.agentId ?? '', p.rest].join('\u0000');
    return found.sort((a, b) => (label(a) < label(b) ? -1 : label(a) > label(b) ? 1 : 0));
  }

  /**
   * `eraseUser` of every kind: the ids `ids` reads (the store's snapshot of the user), then every key of
   * the user's partitions of `kind` — records, order, log, meta, session data, working namespaces —
   * found by SCAN, each checked to be the user's, unlinked in batches.
   */
  protected async eraseKeys(
    kind: StoreKind,
    userId: string,
    ids: () => Promise<string[]>,
  ): Promise<string[]> {
    parseOrThrow(SnapshotSelectorSchema, { userId }, 'user id');
    const erased = await ids();
    const pattern = this.keys.pattern(kind, kind === 'details' ? ':*' : '', userId);
    const keys = (await this.connection.scan(pattern)).filter(
      (key) => this.keys.parse(kind, key)?.userId === userId,
    );
    await this.connection.unlink(keys);
    return erased;
  }

  protected async snapshotOf<R>(
    kind: StoreKind,
    selector: SnapshotSelector,
    load: (userId: string | undefined) => Promise<R[]>,
  ): Promise<SnapshotEnvelope<R>> {
    const parsed = parseOrThrow(SnapshotSelectorSchema, selector, 'snapshot selector');
    const userId = 'userId' in parsed ? parsed.userId : undefined;
    return makeEnvelope(kind, parsed, await load(userId), this.clock);
  }

  /**
   * @internal
   * Validate a snapshot completely (envelope, every record, the user restriction, duplicate ids per
   * partition), then replace every partition it contains in one MULTI/EXEC: all of them or none.
   */
  protected async restoreFrom<R>(
    kind: StoreKind,
    recordSchema: RecordSchema<R>,
    input: unknown,
    options: RestoreOptions,
    spec: RestoreSpec<R> & {
      /** Queue the replacement of one partition (given its records, in snapshot order). */
      replace(multi: Multi, records: R[]): void;
    },
  ): Promise<RestoreReport> {
    const plan = planRestore(kind, recordSchema, input, options, spec);
    if (plan.partitions.length > 0) {
      await this.connection.transaction(`${kind} restore`, (multi) => {
        for (const records of plan.partitions) spec.replace(multi, records);
      });
    }
    return { records: plan.records, partitions: plan.partitions.length };
  }
}
