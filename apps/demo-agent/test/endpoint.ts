import { HashingEmbedder } from '@kioku/core';
import { json, type Reply, startScriptedServer } from '@kioku/openai-test-server';

/** Flags that make the demo embed with the endpoint below (a model name OpenAI does not know needs its size). */
export const EMBEDDING_FLAGS = ['--embedding-model', 'kioku-hashing', '--embedding-dimensions', '256'];

/**
 * The scripted OpenAI-compatible server with embeddings: `/v1/embeddings` is answered at any time with
 * core's HashingEmbedder (256 dimensions, lexical: it relates "kuberntes" to "Kubernetes"), chat
 * completions with the `chat` replies in order.
 */
export async function startEndpoint(chat: Reply[]) {
  const embedder = new HashingEmbedder();
  const queue = [...chat];
  const route: Reply = (res, body, req) => {
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
    chats: () => server.received.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body),
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
