import OpenAI from 'openai';

/** How to reach an OpenAI-compatible endpoint. Every field falls back to the environment. */
export interface OpenAIClientOptions {
  /** An existing client; the other connection options are then ignored. */
  client?: OpenAI;
  /** Default `OPENAI_API_KEY`. Local servers (Ollama, vLLM, LM Studio) usually need none. */
  apiKey?: string;
  /** Default `OPENAI_BASE_URL`, else OpenAI's API. */
  baseURL?: string;
  /** Retries on 408/409/429/5xx, connection errors and timeouts, with exponential backoff (default 2). */
  maxRetries?: number;
  /** Per-request timeout in milliseconds (default 60 000). */
  timeoutMs?: number;
}

export function createClient(options: OpenAIClientOptions): OpenAI {
  if (options.client) return options.client;
  const baseURL = options.baseURL ?? env('OPENAI_BASE_URL');
  // The SDK refuses to start without a key; OpenAI-compatible local servers accept any.
  const apiKey = options.apiKey ?? env('OPENAI_API_KEY') ?? (baseURL ? 'not-needed' : undefined);
  return new OpenAI({
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(baseURL === undefined ? {} : { baseURL }),
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 60_000,
  });
}

export function env(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}
