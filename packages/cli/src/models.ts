import type { ChatModel } from '@kioku/core';
import { importAdapter, LOADERS } from './adapters.js';
import { requireOpenAIEndpoint } from './embedders.js';

/**
 * The chat model memory passes run on: `@kioku/openai` over the endpoint the environment names
 * (`OPENAI_API_KEY`, `OPENAI_BASE_URL`), the model `name` (default `OPENAI_MODEL`, else gpt-4o-mini), at
 * temperature 0 so a pass is as repeatable as the model allows.
 */
export async function loadChatModel(name: string | undefined, what: string): Promise<ChatModel> {
  const { OpenAIChatModel } = await importAdapter('openai', LOADERS.openai);
  requireOpenAIEndpoint(what);
  return new OpenAIChatModel({ ...(name ? { model: name } : {}), temperature: 0 });
}
