import { HashingEmbedder } from '@kioku/core';
import { json, type Reply, startScriptedServer } from '@kioku/openai-test-server';

/** Flags that make the demo embed with the endpoint below (a model name OpenAI does not know needs its size). */
export const EMBEDDING_FLAGS = ['--embedding-model', 'kioku-hashing', '--embedding-dimensions', '256'];

/** The JSON-schema name a memory pass asks for (`memory_extraction`, …), or undefined for a chat call. */
function passOf(body: Record<string, unknown>): string | undefined {
  return (body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
}

/**
 * The scripted OpenAI-compatible server with embeddings: `/v1/embeddings` is answered at any time with
 * core's HashingEmbedder (256 dimensions, lexical: it relates "kuberntes" to "Kubernetes"); the memory
 * passes' requests (extraction, enrichment, the dream: a JSON-schema response format) with the `passes`
 * answers of their schema in order (an answer may be a function of the request), `{}` (nothing to
 * change) when none is left; chat completions with the
 * `chat` replies in order.
 */
/** A memory pass's scripted answer: the object, or a function of the request (to name ids it was shown). */
export type PassAnswer = unknown | ((body: Record<string, unknown>) => unknown);

export async function startEndpoint(chat: Reply[], passes: Record<string, PassAnswer[]> = {}) {
  const embedder = new HashingEmbedder();
  const queue = [...chat];
  const route: Reply = (res, body, req) => {
    const pass = passOf(body);
    if (pass !== undefined) {
      const next = passes[pass]?.shift() ?? {};
      const answer = typeof next === 'function' ? next(body) : next;
      return json(res, 200, {
        id: 'pass',
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: JSON.stringify(answer) },
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    }
    if (req.url?.endsWith('/embeddings')) {
      void embedder.embed(body.input as string[]).then((vectors) =>
        json(res, 200, {
          object: 'list',
          data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
          model: body.model,
          usage: { prompt_tokens: 0, total_tokens: 0 },
        }),
      );
      return;
    }
    const next = queue.shift();
    if (!next) return json(res, 500, { error: { message: 'chat script exhausted' } });
    next(res, body, req);
  };
  const server = await startScriptedServer(route);
  return {
    ...server,
    /** Bodies of the chat completion requests, in order. */
    chats: () =>
      server.received
        .filter((r) => r.path.endsWith('/chat/completions') && passOf(r.body) === undefined)
        .map((r) => r.body),
    /** Bodies of the memory passes' requests, in order. */
    passes: () => server.received.filter((r) => passOf(r.body) !== undefined).map((r) => r.body),
    /** Every text sent to the embeddings endpoint. */
    embedded: () =>
      server.received.filter((r) => r.path.endsWith('/embeddings')).flatMap((r) => r.body.input as string[]),
  };
}

/** The system message of a chat request that starts with `marker` (a memory block's header), or ''. */
export function systemBlock(body: Record<string, unknown>, marker: string): string {
  const messages = body.messages as { role: string; content: string | null }[];
  return messages.find((m) => m.role === 'system' && m.content?.startsWith(marker))?.content ?? '';
}
