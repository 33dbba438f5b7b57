export { type AdapterType, checkAdapter, importAdapter } from './adapters.js';
export * from './backends.js';
export * from './bundle.js';
export * from './copy.js';
export * from './embedders.js';
export * from './errors.js';
export { formatReceipt } from './forget-command.js';
export * from './indexes.js';
export type { CliIo } from './io.js';
export * from './kinds.js';
export { run } from './main.js';
export * from './reembed.js';
export {
  adapterModules,
  registerStoreAdapter,
  type StoreAdapterContext,
  type StoreAdapterFactory,
  type StoreAdapterModule,
  type StoreAdapterSpec,
} from './store-adapters.js';
export * from './stores.js';
