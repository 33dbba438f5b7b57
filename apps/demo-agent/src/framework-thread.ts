import type { Conversation, Kioku } from '@kioku/core';
import type { OpenAIChatModel } from '@kioku/openai';

/** Model calls a framework's turn may make (as the AI SDK's turns). */
export const MAX_STEPS = 8;

/**
 * The framework's thread of the chat's conversation: the session's id, or — for a session the framework's
 * memory created (a resumed one) — the thread it was created for.
 */
export async function threadOf(
  kioku: Kioku,
  conversation: Conversation,
  metadataKey: string,
): Promise<string> {
  const { userId, agentId } = conversation.scope;
  const info = await kioku.stores.sessions.get({ userId, agentId }, conversation.sessionId);
  const thread = info?.metadata[metadataKey];
  return typeof thread === 'string' ? thread : conversation.sessionId;
}

/** The endpoint's API key for a framework's client (a local endpoint may need none). */
export const apiKeyOf = (model: OpenAIChatModel) => model.client.apiKey || 'no-key';
