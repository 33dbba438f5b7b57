/*
 * `@kioku/core`: what an app author needs — the builder and the facade it builds, conversations, the
 * feature factories, the in-memory stores and bundle helpers, the record types, models, tools, scope and
 * errors. Everything else has an entry point for its audience:
 *   `@kioku/core/store`    store contracts, record schemas, snapshots, vectors (apps that use stores directly)
 *   `@kioku/core/adapter`  seams and rule functions for storage adapter authors
 *   `@kioku/core/passes`   extraction, the dream, changesets, forgetting, quarantine, leases (apps that run passes)
 *   `@kioku/core/model`    structured output, tool definitions and token counts (model and framework adapters)
 *   `@kioku/core/testing`  fakes for tests
 * The committed API report of each is in `packages/core/api/`.
 */

// Scope, errors, tokens and time
export type { Clock } from './foundation/clock.js';
export { currentScope, runWithScope } from './foundation/context.js';
export {
  AbortedError,
  CapacityError,
  ConflictError,
  CorruptDataError,
  isKiokuError,
  KiokuError,
  type KiokuErrorCode,
  NotFoundError,
  ScopeError,
  StorageError,
  StructuredOutputError,
  TurnNotRecordedError,
  UnsupportedError,
  ValidationError,
} from './foundation/errors.js';
export type { Scope } from './foundation/scope.js';
// Wiring: one builder, one facade
export { type FactsBuilderOptions, KiokuBuilder } from './kioku/builder.js';
export type { Kioku } from './kioku/kioku.js';
export type { FeatureContext, FeatureFactory, KiokuOptions } from './kioku/options.js';
export type { BackgroundEvent } from './memory/background/queue.js';
// Features, for `builder.use(…)` or a stack without the builder
export { extraction } from './memory/extraction/feature.js';
export { type FactMode, factMemory } from './memory/facts/feature.js';
export { feedback } from './memory/feedback/feature.js';
export { conversationHistory } from './memory/history/feature.js';
export { knowledgeDocuments } from './memory/knowledge/feature.js';
export { factLimits } from './memory/limits/feature.js';
export { memoryRefExpansion } from './memory/offload/expansion.js';
export { toolOutputOffload } from './memory/offload/feature.js';
export { planMode } from './memory/plans/feature.js';
export { workingMemory } from './memory/working/feature.js';
// Models
export type { ChatModel, ChatModelReply, ChatModelRequest, ModelUsage } from './model/chat-model.js';
export type { ChatMessage, ToolCall } from './model/messages.js';
export { defineTool, type Tool, type ToolContext, type Toolkit } from './model/tool.js';
// Conversations and what a turn spent
export { Conversation, type PreparedTurn, type TurnResult } from './runtime/conversation.js';
// Writing a feature or a tool of your own
export type { MemoryFeature } from './runtime/feature.js';
export { modelIntentClassifier } from './runtime/intent/model.js';
export type { IntentClassifier, RecallDecision, RecallMode } from './runtime/intent/recall.js';
export type { LedgerEntry, TurnLedger } from './runtime/ledger.js';
export type {
  DroppedItem,
  MiddlewareContext,
  MiddlewareResult,
  PrefetchContext,
  PromptMiddleware,
} from './runtime/middleware.js';
// Stores and embeddings
export { combineStores, type KiokuStores } from './store/bundle/bundle.js';
export { createInMemoryStores } from './store/bundle/memory-stores.js';
export { withEmbeddings } from './store/bundle/with-embeddings.js';
// Records
export type { DetailRecord } from './store/details/record.js';
export type { KnowledgeDocument } from './store/documents/record.js';
export type { Embedder } from './store/embeddings/embedder.js';
export { EmbeddingModelMismatchError } from './store/embeddings/embedder.js';
export { HashingEmbedder } from './store/embeddings/hashing.js';
export type { Fact } from './store/facts/record.js';
export { STORE_KINDS, type StoreKind } from './store/kinds.js';
export type { Plan } from './store/plans/record.js';
export type { SessionInfo, TranscriptEntry } from './store/sessions/record.js';
export type { WorkingEntry } from './store/working/record.js';
export type { TelemetryOptions } from './telemetry/options.js';
export { defaultTokenizer, type Tokenizer } from './tokens/tokenizer.js';
