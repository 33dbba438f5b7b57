export { pairToolCalls } from '../../runtime/transcript-turns.js';
export { CONVERSATION_DEFAULTS, type ConversationHistoryOptions, conversationHistory } from './feature.js';
