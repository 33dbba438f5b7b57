export { type AdapterType, checkAdapter, importAdapter } from './adapters.js';
export * from './backends.js';
export * from './bundle.js';
export * from './copy.js';
export * from './errors.js';
export * from './kinds.js';
export { type CliIo, run } from './main.js';
