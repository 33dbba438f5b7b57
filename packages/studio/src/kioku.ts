/*
 * Everything Studio takes from @kioku/core, in one file: core's entry points are being reshaped, and a
 * moved name should be mended here only.
 */

export {
  createInMemoryStores,
  type Fact,
  isKiokuError,
  type Kioku,
  KiokuBuilder,
  type KiokuError,
  type KiokuStores,
  NotFoundError,
  type Plan,
  type Scope,
  type SessionInfo,
  STORE_KINDS,
  type StoreKind,
  type TurnLedger,
  ValidationError,
} from '@kioku/core';
export { englishAnalyzer, factSearchText, redactUrl } from '@kioku/core/adapter';
export {
  type CascadeResult,
  type ChangeOperation,
  type Changeset,
  type ErasableKind,
  type ErasureReceipt,
  erasureDigest,
  type FactDraft,
  forgetFact,
  forgetSession,
  forgetUser,
  isQuarantined,
  type KeptChangeset,
  sourceLabel,
} from '@kioku/core/passes';
export {
  HybridFactStore,
  IdSchema,
  isKiokuSession,
  KIOKU_SESSION_KEY,
  type SessionStore,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type WorkingEntryInfo,
} from '@kioku/core/store';
