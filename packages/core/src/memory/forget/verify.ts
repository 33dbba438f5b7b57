import { IdSchema } from '../../foundation/ids.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { STORE_KINDS } from '../../store/kinds.js';
import type { ErasableKind } from './receipt.js';

/**
 * What `verifyErased` found: nothing, or per kind how many records are left and the first ids; an entry
 * with `place` is a residue in a backend's derived place (see `ErasureResidue`), with no ids.
 */
export type ErasureCheck =
  | { erased: true }
  | { erased: false; left: Array<{ kind: ErasableKind; count: number; ids: string[]; place?: string }> };

/**
 * Scan every kind and the vector index for records of `userId` through each store's `snapshot` (a full
 * read of the user, every agent, independent of the erase path), then ask each store that has derived
 * places of its own (statistics, search indexes; `erasureResidue`) to read them directly, for each kind
 * with no record left;
 * `{ erased: true }` when there is nothing in either.
 */
export async function verifyErased(stores: KiokuStores, userId: string): Promise<ErasureCheck> {
  parseOrThrow(IdSchema, userId, 'user id');
  const left: Array<{ kind: ErasableKind; count: number; ids: string[]; place?: string }> = (
    await scanUser(stores, userId)
  )
    .filter((k) => k.ids.length > 0)
    .map(({ kind, ids }) => ({ kind, count: ids.length, ids: ids.slice(0, 20) }));
  // Derived places follow their records: they are residue only once a kind's records are all gone.
  for (const kind of STORE_KINDS.filter((k) => !left.some((l) => l.kind === k))) {
    for (const residue of (await stores[kind].erasureResidue?.(userId)) ?? []) {
      if (residue.count > 0) left.push({ kind, count: residue.count, ids: [], place: residue.place });
    }
  }
  return left.length === 0 ? { erased: true } : { erased: false, left };
}

/** The ids of every record of `userId`, kind by kind (what `forgetUser` would remove). */
export async function scanUser(
  stores: KiokuStores,
  userId: string,
): Promise<Array<{ kind: ErasableKind; ids: string[] }>> {
  const selector = { userId };
  const found: Array<{ kind: ErasableKind; ids: string[] }> = [
    { kind: 'facts', ids: (await stores.facts.snapshot(selector)).records.map((r) => r.id) },
    { kind: 'documents', ids: (await stores.documents.snapshot(selector)).records.map((r) => r.id) },
    { kind: 'plans', ids: (await stores.plans.snapshot(selector)).records.map((r) => r.id) },
    { kind: 'working', ids: (await stores.working.snapshot(selector)).records.map((r) => r.key) },
    { kind: 'sessions', ids: (await stores.sessions.snapshot(selector)).records.map((r) => r.session.id) },
    { kind: 'details', ids: (await stores.details.snapshot(selector)).records.map((r) => r.id) },
  ];
  if (stores.vectors) {
    found.push({ kind: 'vectors', ids: (await stores.vectors.snapshot(selector)).records.map((r) => r.id) });
  }
  return found;
}
