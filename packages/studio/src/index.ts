/*
 * `@kioku/studio`: a local web page over a Kioku store — users and what they hold, search with its
 * ranking explained, changeset review, quarantine, forgetting with receipts, and turn ledgers.
 * `kioku studio` (of @kioku/cli) serves it from a store spec.
 */

export {
  type DirectorySource,
  openDirectory,
  type PartitionPage,
  type PartitionQuery,
  type PartitionSummary,
  snapshotDirectory,
  type UserDirectory,
} from './directory/index.js';
export { LEDGER_SESSION_PURPOSE, type RecordedTurn, TurnLedgerLog } from './ledgers.js';
export type { CascadeReceipt } from './receipts.js';
export { isLoopback } from './security.js';
export { type RunningStudio, type StudioOptions, serveStudio } from './server.js';
