import type { PassResult } from '../changesets/changeset-log.js';
import { changesetPass } from '../changesets/pass-telemetry.js';
import { type ExtractBatchOptions, extractBatch } from './batch.js';

/** The options of one extraction pass over a session's pending turns (those of `extractBatch`). */
export type PendingTurnsOptions = ExtractBatchOptions;

/**
 * The one place the outbox calls extraction: one changeset for all the exchanges of a pass (with
 * `apply: false`, the drain applies it once its watermark is written). The exchanges are read by
 * `extractBatch`: one model call for the pass (two when the user's similar facts do not fit its budget).
 */
export function extractPendingTurns(options: PendingTurnsOptions): Promise<PassResult> {
  const attributes = () => ({
    'kioku.session.id': options.sessionId,
    'kioku.pass.turns': options.exchanges.length,
  });
  return changesetPass('extraction', attributes, () => extractBatch(options));
}
