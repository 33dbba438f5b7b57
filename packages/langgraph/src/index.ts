export {
  KiokuGraphMemory,
  type KiokuGraphMemoryOptions,
  type MessagesState,
  THREAD_METADATA_KEY,
} from './memory.js';
export { isFinalAnswer, messageText, toChatMessages } from './messages.js';
export { type ItemForgetReceipt, KiokuStore, type KiokuStoreOptions, type PutSource } from './store.js';
export { runConfigurable, type UserOption } from './user.js';
