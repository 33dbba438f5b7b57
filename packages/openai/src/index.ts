export * from './chat-model.js';
export * from './client.js';
export * from './embedder.js';
export * from './errors.js';
export * from './messages.js';
