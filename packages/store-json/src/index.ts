export { JsonFileBackend, type JsonFileBackendOptions } from './file-backend.js';
export {
  createJsonStores,
  JsonDetailStore,
  JsonDocumentStore,
  JsonFactStore,
  JsonPlanStore,
  JsonSessionStore,
  type JsonStoreOptions,
  JsonWorkingMemoryStore,
} from './stores.js';
