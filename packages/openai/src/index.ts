export {
  type ChatStreamEvent,
  OpenAIChatModel,
  type OpenAIChatModelOptions,
  type StructuredOutputMode,
} from './chat-model.js';
export { env, type OpenAIClientOptions } from './client.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from './embedder.js';
export { type EndpointFailure, isOpenAIEndpointError, OpenAIEndpointError } from './errors.js';
