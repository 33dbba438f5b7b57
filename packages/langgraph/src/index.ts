export { KiokuStore, type ItemForgetReceipt, type KiokuStoreOptions, type PutSource } from './store.js';
export { runConfigurable, type UserOption } from './user.js';
