/*
 * Everything Studio takes from @kioku/core, in one file: core's entry points are being reshaped, and a
 * moved name should be mended here only.
 */

export {
  type CascadeResult,
  type Changeset,
  type ChangeOperation,
  type ErasableKind,
  type ErasureReceipt,
  erasureDigest,
  type Fact,
  type FactDraft,
  HybridFactStore,
  isKiokuError,
  isKiokuSession,
  isQuarantined,
  type KeptChangeset,
  type KiokuStores,
  KIOKU_SESSION_KEY,
  type Plan,
  type Scope,
  type SessionInfo,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  type SessionStore,
  sourceLabel,
  STORE_KINDS,
  type StoreKind,
  type TurnLedger,
  createInMemoryStores,
  forgetFact,
  forgetSession,
  forgetUser,
  Kioku,
  KiokuBuilder,
  type KiokuError,
  IdSchema,
  NotFoundError,
  ValidationError,
  type WorkingEntryInfo,
} from '@kioku/core';
export { englishAnalyzer, factSearchText } from '@kioku/core/adapter';
