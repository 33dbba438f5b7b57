export type { AdapterType } from './adapters.js';
export {
  type Backend,
  type BackendSpec,
  type BackendType,
  type OpenOptions,
  openBackend,
  parseBackend,
} from './backends.js';
export { BUNDLE_FORMAT, type Bundle, makeBundle, parseBundle } from './bundle.js';
export { type KindReport, type RestoreKindsOptions, restoreKinds, snapshotKinds } from './copy.js';
export { type EmbedderSpec, loadEmbedder, parseEmbedder } from './embedders.js';
export { UsageError } from './errors.js';
export { formatReceipt } from './forget-command.js';
export { type IndexSpec, type OpenIndex, openIndex, parseIndex } from './indexes.js';
export type { CliIo } from './io.js';
export { KINDS, type Kind, type VectorKind } from './kinds.js';
export { run } from './main.js';
export { checkModels, planReembed, reembedKinds, type VectorKindReport } from './reembed.js';
export {
  adapterModules,
  registerStoreAdapter,
  type StoreAdapterContext,
  type StoreAdapterFactory,
  type StoreAdapterModule,
  type StoreAdapterSpec,
} from './store-adapters.js';
export { type OpenStoresOptions, openStores, type StoresSpec } from './stores.js';
export { startTelemetry, type TelemetryHandle } from './telemetry.js';
