import { createHash } from 'node:crypto';
import { STORE_KINDS } from '../../store/kinds.js';

/** What `forgetUser` erases: the six store kinds and the vector index. */
export const ERASABLE_KINDS = [...STORE_KINDS, 'vectors'] as const;
export type ErasableKind = (typeof ERASABLE_KINDS)[number];

export const ERASURE_RECEIPT_FORMAT = 'kioku.erasure-receipt';

/** One kind's share of an erasure. */
export interface ErasedKind {
  kind: ErasableKind;
  /** Which backend held it (`postgres`, `redis`, … as the caller named it; `stores` when unnamed). */
  backend: string;
  /** Records (or points) removed. */
  count: number;
}

/**
 * Proof of a `forgetUser`: what was removed, per kind and backend, when, and a digest of the removed ids.
 * Keep it instead of the data: two receipts of the same erasure have the same digest.
 */
export interface ErasureReceipt {
  format: typeof ERASURE_RECEIPT_FORMAT;
  schemaVersion: 1;
  userId: string;
  /** True when nothing was removed: the counts and digest say what a real run would remove. */
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  removed: ErasedKind[];
  total: number;
  /** `sha256:` + hex of the sorted lines `<kind>:<id>` joined by `\n` (empty input when nothing was removed). */
  digest: string;
  /** Erase-then-scan passes it took until a scan found nothing (more than 1: writes raced with it). */
  passes: number;
}

/** The digest of a receipt: order-independent, one line per removed id. */
export function erasureDigest(ids: ReadonlyMap<ErasableKind, readonly string[]>): string {
  const lines: string[] = [];
  for (const [kind, list] of ids) for (const id of list) lines.push(`${kind}:${id}`);
  lines.sort();
  return `sha256:${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
}
