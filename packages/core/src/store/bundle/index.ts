export { STORE_KINDS, type StoreKind } from '../kinds.js';
export { combineStores, type KiokuStores, once } from './bundle.js';
export { createInMemoryStores, type InMemoryStoresOptions } from './memory-stores.js';
export { bundleEmbedder, type EmbeddingsOptions, withEmbeddings } from './with-embeddings.js';
