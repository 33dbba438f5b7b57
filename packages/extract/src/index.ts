export * from './add-document.js';
export * from './extract.js';
export { MIME_TYPES, type SupportedMimeType } from './mime.js';
