export { KiokuMastraMemory, type KiokuMastraMemoryOptions, THREAD_METADATA_KEY } from './memory.js';
export { messageText, toChatMessages } from './messages.js';
export { KiokuContextProcessor, KiokuRecordProcessor, type ThreadConversations } from './processors.js';
