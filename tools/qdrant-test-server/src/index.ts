export { Collections, HttpError } from './collections.js';
export { filterMatches, type StoredPoint } from './filter.js';
export { defaultOpenApiPath, OPENAPI_PATH_ENV, OpenApiSpec, toJsonSchema } from './schema.js';
export {
  QdrantTestServer,
  type QdrantTestServerOptions,
  startQdrantTestServer,
  type Violation,
} from './server.js';
