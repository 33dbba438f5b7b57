export * from './file-backend.js';
export * from './stores.js';
