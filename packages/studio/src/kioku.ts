/*
 * Everything Studio takes from @kioku/core, in one file: core's entry points are being reshaped, and a
 * moved name should be mended here only.
 */

export {
  type CascadeResult,
  type ChangeOperation,
  type Changeset,
  createInMemoryStores,
  type ErasableKind,
  type ErasureReceipt,
  erasureDigest,
  type Fact,
  type FactDraft,
  forgetFact,
  forgetSession,
  forgetUser,
  HybridFactStore,
  IdSchema,
  isKiokuError,
  isKiokuSession,
  isQuarantined,
  type KeptChangeset,
  KIOKU_SESSION_KEY,
  Kioku,
  KiokuBuilder,
  type KiokuError,
  type KiokuStores,
  NotFoundError,
  type Plan,
  type Scope,
  type SessionInfo,
  type SessionStore,
  SNAPSHOT_FORMAT,
  SNAPSHOT_SCHEMA_VERSION,
  STORE_KINDS,
  type StoreKind,
  sourceLabel,
  type TurnLedger,
  ValidationError,
  type WorkingEntryInfo,
} from '@kioku/core';
export { englishAnalyzer, factSearchText } from '@kioku/core/adapter';
