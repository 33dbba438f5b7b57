import { json, type Reply, startScriptedServer, status } from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIEmbedder, OpenAIEndpointError } from '../src/index.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Replies with 3-dimensional vectors [i, len, 1], in reverse order to test re-sorting by index. */
const embeddings: Reply = (res, body) => {
  const input = body.input as string[];
  const data = input
    .map((t, i) => ({ object: 'embedding', index: i, embedding: [i, t.length, 1] }))
    .reverse();
  json(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
};

describe('OpenAIEmbedder', () => {
  it('embeds in batches and keeps the order', async () => {
    const server = await startScriptedServer([embeddings, embeddings]);
    close = server.close;
    const embedder = new OpenAIEmbedder({
      baseURL: server.baseURL,
      model: 'local-embed',
      dimensions: 3,
      batchSize: 2,
    });
    expect(() => new OpenAIEmbedder({ baseURL: server.baseURL, model: 'local-embed' })).toThrow(/dimensions/);
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(vectors).toEqual([
      [0, 1, 1],
      [1, 2, 1],
      [0, 3, 1],
    ]);
    expect(server.received[0]!.body.dimensions).toBeUndefined();
    expect(server.received.map((r) => r.path)).toEqual(['/v1/embeddings', '/v1/embeddings']);
    expect(server.received[0]!.body.input).toEqual(['a', 'bb']);
  });

  it('knows OpenAI model sizes and sends requested dimensions', async () => {
    expect(new OpenAIEmbedder({ apiKey: 'k', model: 'text-embedding-3-large' }).dimensions).toBe(3072);
    const server = await startScriptedServer([embeddings]);
    close = server.close;
    const embedder = new OpenAIEmbedder({ baseURL: server.baseURL, dimensions: 3 });
    await embedder.embed(['x']);
    expect(server.received[0]!.body.dimensions).toBe(3);
  });

  it('rejects vectors of the wrong size and wraps HTTP errors', async () => {
    const server = await startScriptedServer([embeddings, status(401)]);
    close = server.close;
    const wrong = new OpenAIEmbedder({ baseURL: server.baseURL, dimensions: 8 });
    await expect(wrong.embed(['x'])).rejects.toMatchObject({ failure: 'response' });
    const error = await wrong.embed(['x']).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAIEndpointError);
    expect(error.status).toBe(401);
  });
});
