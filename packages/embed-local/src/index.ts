export {
  SENTENCE_ENCODER_DIMENSIONS,
  SENTENCE_ENCODER_FUSION_WEIGHT,
  SentenceEncoderEmbedder,
  type SentenceEncoderOptions,
} from './embedder.js';
export { isLocalModelLoadError, LocalModelLoadError } from './errors.js';
