export { type AddDocumentOptions, addDocumentFromSource } from './add-document.js';
export {
  EXTRACT_DEFAULTS,
  type ExtractedText,
  type ExtractOptions,
  type ExtractSource,
  extractText,
} from './extract.js';
export type { SupportedMimeType } from './mime.js';
