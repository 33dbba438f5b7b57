export { FIELDS, INDEXED_FIELDS, scopeFilter } from './payload.js';
export { pointId } from './point-id.js';
export { QdrantVectorIndex, type QdrantVectorIndexOptions } from './qdrant-index.js';
