export { pairToolCalls } from '../../turn/transcript-turns.js';
export { CONVERSATION_DEFAULTS, type ConversationHistoryOptions, conversationHistory } from './feature.js';
