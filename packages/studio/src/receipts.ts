import { randomBytes } from 'node:crypto';
import { type CascadeResult, type ErasableKind, type ErasureReceipt, erasureDigest } from './kioku.js';

/**
 * The receipt of forgetting one fact or one session (and what derives from them): the ids removed per
 * kind and the digest `forgetUser`'s receipt uses (`sha256:` of the sorted `<kind>:<id>` lines).
 */
export interface CascadeReceipt {
  format: 'kioku.cascade-receipt';
  schemaVersion: 1;
  what: 'fact' | 'session';
  target: string;
  userId: string;
  agentId?: string;
  dryRun: boolean;
  at: string;
  removed: CascadeResult;
  total: number;
  digest: string;
}

export type AnyReceipt = ErasureReceipt | CascadeReceipt;

export function cascadeReceipt(
  what: CascadeReceipt['what'],
  scope: { userId: string; agentId?: string | undefined },
  target: string,
  removed: CascadeResult,
  dryRun: boolean,
  at: Date,
): CascadeReceipt {
  const ids = new Map<ErasableKind, string[]>([
    ['facts', removed.facts],
    ['sessions', removed.sessions],
    ['plans', removed.plans],
    ['details', removed.details],
  ]);
  return {
    format: 'kioku.cascade-receipt',
    schemaVersion: 1,
    what,
    target,
    userId: scope.userId,
    ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
    dryRun,
    at: at.toISOString(),
    removed,
    total: removed.facts.length + removed.sessions.length + removed.plans.length + removed.details.length,
    digest: erasureDigest(ids),
  };
}

/**
 * The receipts of this run's erasures, by a random id, so the page after a forget can offer the receipt
 * as a download. Kept in memory only (a receipt holds ids, counts and a digest, never content): download
 * it before stopping the server.
 */
export class Receipts {
  readonly #byId = new Map<string, AnyReceipt>();

  add(receipt: AnyReceipt): string {
    const id = randomBytes(12).toString('base64url');
    this.#byId.set(id, receipt);
    return id;
  }

  get(id: string): AnyReceipt | undefined {
    return this.#byId.get(id);
  }
}
