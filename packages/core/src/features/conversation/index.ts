export { CONVERSATION_DEFAULTS, type ConversationHistoryOptions, conversationHistory } from './feature.js';
export { pairToolCalls } from './turns.js';
