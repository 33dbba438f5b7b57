export {
  combineStores,
  type KiokuStores,
  once,
  STORE_KINDS,
  type StoreKind,
} from './bundle.js';
export { bundleEmbedder, type EmbeddingsOptions, withEmbeddings } from './embeddings.js';
export { createInMemoryStores, type InMemoryStoresOptions } from './memory.js';
