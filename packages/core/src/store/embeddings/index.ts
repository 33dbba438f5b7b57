export {
  type Embedder,
  EmbeddingModelMismatchError,
  type EmbedOptions,
  embedTexts,
} from './embedder.js';
export { HashingEmbedder, type HashingEmbedderOptions } from './hashing.js';
