import type { Attributes } from '@opentelemetry/api';
import type { CascadeResult } from '../memory/forget/cascade.js';
import { type ErasableKind, type ErasureReceipt, erasureDigest } from '../memory/forget/receipt.js';
import { ATTR } from '../telemetry/attributes.js';
import { type Telemetry, withTelemetry } from '../telemetry/telemetry.js';

/** What was forgotten: a user (everything), one session, or one fact (with what derives from them). */
export type ForgetTarget = 'user' | 'session' | 'fact';

/**
 * One forget in its span (`kioku.forget <target>`), with the receipt id (its digest: `sha256:` of the
 * sorted `<kind>:<id>` lines, as `forgetUser`'s receipt and Studio's cascade receipts compute it) and the
 * count removed; `kioku.forget.receipts` counts it by target. Never the ids themselves.
 */
export function observeForget<T extends ErasureReceipt | CascadeResult>(
  telemetry: Telemetry | undefined,
  target: ForgetTarget,
  scope: { userId: string; agentId?: string | undefined },
  run: () => Promise<T>,
): Promise<T> {
  if (!telemetry) return run();
  return withTelemetry(telemetry, () =>
    telemetry.span(
      `kioku.forget ${target}`,
      { ...telemetry.scope(scope), [ATTR.forgetTarget]: target },
      async (span) => {
        const done = await run();
        const receipt = receiptOf(done);
        span?.setAttributes(receipt);
        telemetry.metrics?.forgetReceipts.add(1, {
          [ATTR.forgetTarget]: target,
          'kioku.forget.dry_run': receipt['kioku.forget.dry_run'] === true,
        });
        return done;
      },
    ),
  );
}

function receiptOf(done: ErasureReceipt | CascadeResult): Attributes {
  if ('digest' in done) {
    return {
      [ATTR.receiptId]: done.digest,
      'kioku.forget.removed': done.total,
      'kioku.forget.passes': done.passes,
      'kioku.forget.dry_run': done.dryRun,
    };
  }
  const ids = new Map<ErasableKind, string[]>([
    ['facts', done.facts],
    ['sessions', done.sessions],
    ['plans', done.plans],
    ['details', done.details],
  ]);
  const removed = done.facts.length + done.sessions.length + done.plans.length + done.details.length;
  return {
    [ATTR.receiptId]: erasureDigest(ids),
    'kioku.forget.removed': removed,
    'kioku.forget.dry_run': false,
  };
}
