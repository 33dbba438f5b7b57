export { type ItemForgetReceipt, KiokuStore, type KiokuStoreOptions, type PutSource } from './store.js';
export { runConfigurable, type UserOption } from './user.js';
