import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { StorageError } from '../../foundation/errors.js';
import { IdSchema } from '../../foundation/ids.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import {
  ERASABLE_KINDS,
  ERASURE_RECEIPT_FORMAT,
  type ErasableKind,
  type ErasedKind,
  type ErasureReceipt,
  erasureDigest,
} from './receipt.js';
import { type ErasureCheck, scanUser, verifyErased } from './verify.js';

export interface ForgetUserOptions {
  /** Count and digest what would be removed, remove nothing. */
  dryRun?: boolean;
  /** The backend of each kind, for the receipt (the CLI passes `postgres`, `redis`, …). */
  backends?: Partial<Record<ErasableKind, string>>;
  clock?: Clock;
  /** Erase-then-scan passes before giving up while writes keep arriving (default 10). */
  maxPasses?: number;
}

/**
 * The order of a pass: sources before what is derived from them — sessions (transcripts feed extraction),
 * details and documents, plans, working memory, then facts, and the vector index last (a hybrid write
 * stores its record before its vector), so a background job finishing mid-pass leaves only what the next
 * scan sees.
 */
const ERASE_ORDER: readonly ErasableKind[] = [
  'sessions',
  'details',
  'documents',
  'plans',
  'working',
  'facts',
  'vectors',
];

/**
 * Erase every record of `userId` — every kind, every agent, thread and namespace, the vector index, and
 * the sessions Kioku keeps for itself (kept changesets, feedback, the conversation log's watermarks) — and
 * return a receipt. A pass erases each kind with its store's bulk `eraseUser`, then scans every kind again
 * (`verifyErased`); a write of the user that landed during the pass is found and erased by the next one.
 * It returns once a scan finds nothing, so the receipt always stands for a verified erasure. Every step is
 * idempotent: after a crash half-way, running it again converges; a second run finds nothing to remove.
 */
export async function forgetUser(
  stores: KiokuStores,
  userId: string,
  options: ForgetUserOptions = {},
): Promise<ErasureReceipt> {
  parseOrThrow(IdSchema, userId, 'user id');
  const clock = options.clock ?? systemClock;
  const startedAt = isoAt(clock);
  const ids = new Map<ErasableKind, string[]>(ERASABLE_KINDS.map((kind) => [kind, []]));
  const receipt = (passes: number): ErasureReceipt => {
    const removed: ErasedKind[] = ERASABLE_KINDS.filter((k) => k !== 'vectors' || stores.vectors).map(
      (kind) => ({ kind, backend: options.backends?.[kind] ?? 'stores', count: ids.get(kind)!.length }),
    );
    return {
      format: ERASURE_RECEIPT_FORMAT,
      schemaVersion: 1,
      userId,
      dryRun: options.dryRun === true,
      startedAt,
      finishedAt: isoAt(clock),
      removed,
      total: removed.reduce((sum, r) => sum + r.count, 0),
      digest: erasureDigest(ids),
      passes,
    };
  };

  if (options.dryRun) {
    for (const { kind, ids: found } of await scanUser(stores, userId)) ids.get(kind)!.push(...found);
    return receipt(0);
  }
  const maxPasses = options.maxPasses ?? 10;
  let left: ErasureCheck = { erased: true };
  for (let pass = 1; pass <= maxPasses; pass++) {
    for (const kind of ERASE_ORDER) {
      const store = kind === 'vectors' ? stores.vectors : stores[kind];
      if (store) ids.get(kind)!.push(...(await store.eraseUser(userId)));
    }
    left = await verifyErased(stores, userId);
    if (left.erased) return receipt(pass);
  }
  throw new StorageError(
    `User ${userId} still has memory after ${maxPasses} erase passes: something keeps writing for this user. Stop it and run forget again.`,
    { details: { userId, left: left.erased ? [] : left.left } },
  );
}
