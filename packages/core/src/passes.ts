/*
 * `@kioku/core/passes`: the memory passes for an app (or a CLI, a worker) that runs them itself rather than
 * through the `Kioku` facade — extraction, enrichment, the dream, knowledge consolidation and the fact
 * limits; the changesets they write and their review; forgetting and its receipt; quarantine; and the
 * per-user leases and background queue that keep several instances from doing one user's work twice.
 */

// Background work and leases
export { MEMORY_WORK_LEASE, waitForLease } from './memory/background/memory-lease.js';
export {
  type BackgroundJob,
  BackgroundQueue,
  type BackgroundQueueOptions,
  type JobOutcome,
} from './memory/background/queue.js';
// Changesets: what a pass writes, applied with versions, kept, reverted exactly
export {
  type ApplyResult,
  applyChangeset,
  type RevertResult,
  revertChangeset,
} from './memory/changesets/apply.js';
export {
  type ChangeOperation,
  type Changeset,
  countOperations,
  draftOf,
  type FactDraft,
  formatChangeset,
} from './memory/changesets/changeset.js';
export { ChangesetLog, type KeptChangeset, type PassResult } from './memory/changesets/changeset-log.js';
// The dream, its inputs, and knowledge from offloaded outputs
export { ConversationLog, type ConversationLogEntry } from './memory/dream/conversation-log.js';
export { type Directives, loadDirectives } from './memory/dream/directives.js';
export { type DreamOptions, type DreamResult, dream } from './memory/dream/dream.js';
export type { DreamProgress } from './memory/dream/progress.js';
// Extraction and enrichment
export { type EnrichOptions, enrichMemory } from './memory/enrichment/enrich.js';
// save_memory's enrichment requests as an outbox, drained by any instance
export {
  EnrichmentOutbox,
  type EnrichmentOutboxOptions,
  type OutboxEnrichOptions,
} from './memory/enrichment/outbox.js';
export {
  BATCH_DEFAULTS,
  type ExtractBatchOptions,
  extractBatch,
  extractBatchFacts,
} from './memory/extraction/batch.js';
export type { Exchange } from './memory/extraction/exchange.js';
export { type ExtractOptions, extractAndStoreFacts, extractFacts } from './memory/extraction/extract.js';
export {
  type ExtractSessionOptions,
  extractSession,
  SESSION_BATCH_DEFAULT,
} from './memory/extraction/extract-session.js';
export { type Grounding, groundedInUser } from './memory/extraction/grounding.js';
// The transcript as extraction's outbox: what is pending, drained by any instance
export {
  type DrainOptions,
  ExtractionOutbox,
  type ExtractionOutboxOptions,
  OUTBOX_DEFAULTS,
  type OutboxExtractOptions,
  type SessionDrain,
  type UserDrain,
} from './memory/extraction/outbox.js';
export type { PendingTurn } from './memory/extraction/pending-exchanges.js';
export { PendingIndex } from './memory/extraction/pending-index.js';
export { extractPendingTurns, type PendingTurnsOptions } from './memory/extraction/pending-turns.js';
export {
  type PendingDrainer,
  type PendingUserReport,
  type RunPendingOptions,
  type RunPendingReport,
  runPending,
} from './memory/extraction/run-pending.js';
export {
  EXTRACTION_TRIGGER_DEFAULTS,
  type ExtractionTrigger,
} from './memory/extraction/trigger.js';
export {
  type ExtractionWatermark,
  ExtractionWatermarks,
  type WatermarksRead,
} from './memory/extraction/watermarks.js';
export { type FeedbackInput, FeedbackLog, recordFeedback } from './memory/feedback/feedback-log.js';
export type { FeedbackSignal } from './memory/feedback/signal.js';
// Forgetting
export { type CascadeResult, forgetFact, forgetSession } from './memory/forget/cascade.js';
export { type ForgetUserOptions, forgetUser } from './memory/forget/forget-user.js';
export {
  ERASABLE_KINDS,
  type ErasableKind,
  type ErasureReceipt,
  erasureDigest,
} from './memory/forget/receipt.js';
export { type ErasureCheck, verifyErased } from './memory/forget/verify.js';
export {
  type ConsolidateKnowledgeOptions,
  consolidateKnowledge,
} from './memory/knowledge/consolidate-knowledge.js';
export { enforceFactLimits, type FactLimits } from './memory/limits/fact-limits.js';
// Trust: the detector, source labels, quarantine
export { detectInjection, type InjectionVerdict, normaliseForDetection } from './memory/trust/detector.js';
export { sourceLabel } from './memory/trust/fence.js';
export {
  confirmQuarantined,
  dropQuarantined,
  explainMark,
  isQuarantined,
  listQuarantined,
  markUntrusted,
  PASTED_REASON,
  requarantine,
} from './memory/trust/quarantine.js';
export { type Suppression, SuppressionList } from './memory/trust/suppression.js';
export { splitUserWords, type UserWords } from './memory/trust/user-words.js';
// The recall decision's deterministic classifier
export { deterministicIntent } from './runtime/intent/deterministic.js';
export {
  acquireLease,
  type Lease,
  type LeaseOutcome,
  leaseKey,
  readLease,
  withLease,
} from './runtime/lease.js';
export { compareTexts, findNearDuplicate } from './store/facts/near-duplicate.js';
