export { isUserMessage, toChatMessages, userText } from './items.js';
export { KiokuAgentMemory, kiokuMemory } from './memory.js';
export { ITEM_KEY_PREFIX, KiokuSession, type KiokuSessionOptions } from './session.js';
export { kiokuTools, offloadTools } from './tools.js';
