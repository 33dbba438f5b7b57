export { KiokuMemory, kiokuMemory } from './memory.js';
export { type MessageLike, type PromptMessage, type PromptPart, toChatMessages } from './messages.js';
export { kiokuTools, offloadTools } from './tools.js';
