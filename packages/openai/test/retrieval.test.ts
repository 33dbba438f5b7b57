import {
  createInMemoryStores,
  defineTool,
  factMemory,
  KiokuBuilder,
  modelIntentClassifier,
} from '@kioku/core';
import { InMemoryFactStore } from '@kioku/core/store';
import { hang, type Reply, startScriptedServer, text, toolCalls, usage } from '@kioku/openai-test-server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OpenAIChatModel } from '../src/index.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(script: Reply[] | Reply) {
  const server = await startScriptedServer(script);
  close = server.close;
  const model = new OpenAIChatModel({ baseURL: server.baseURL, apiKey: 'k', model: 'm1', maxRetries: 0 });
  return { server, model, bodies: () => server.received.map((r) => r.body as Record<string, unknown>) };
}

const alice = { userId: 'alice' };

/** Fact recall over one fact, recall decided per turn by a model classifier at the scripted endpoint. */
// The classifier's limit: far above a scripted answer over loopback on a busy machine (only the timeout
// test passes a short one, against a request that never gets an answer).
async function turnWith(script: Reply[] | Reply, timeoutMs = 60_000) {
  const { model, bodies } = await serve(script);
  const facts = new InMemoryFactStore();
  await facts.create(alice, { content: 'The staging DB is postgres://staging.internal:5432/app' });
  const stores = { ...createInMemoryStores(), facts };
  const kioku = new KiokuBuilder({
    stores,
    recall: 'auto',
    intent: modelIntentClassifier({ model, timeoutMs }),
  })
    .use(factMemory({ mode: 'recall', facts, sessions: stores.sessions, fallbackResults: 0 }))
    .build();
  const convo = await kioku.startConversation(alice);
  return { convo, model, bodies };
}

describe('retrieval that decides, end to end over an OpenAI-compatible endpoint', () => {
  it('the model classifier decides through structured output, and a concrete message skips recall', async () => {
    const { convo, model, bodies } = await turnWith([
      text(
        JSON.stringify({ intent: 'concrete', reason: 'A translation of given text.', unresolved: [] }),
        usage(60, 9),
      ),
      text('Bonne nuit.'),
    ]);
    const result = await convo.run('Translate "good night" into French.', model);
    expect(result.answer).toBe('Bonne nuit.');
    expect(result.ledger.recall).toEqual({
      recall: false,
      mode: 'auto',
      by: 'model',
      intent: 'concrete',
      reason: 'Concrete: A translation of given text.',
      usage: { inputTokens: 60, outputTokens: 9 },
    });
    const [classify, turn] = bodies();
    expect(classify!.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'intent' } });
    expect(JSON.stringify(classify!.messages)).toContain('New message:\\nTranslate');
    // The turn's prompt holds no recalled memory.
    expect(JSON.stringify(turn!.messages)).not.toContain('staging.internal');
  });

  it('falls back to the deterministic classifier on malformed output, reports it, and still recalls', async () => {
    const { convo, model, bodies } = await turnWith([
      text('I think it is ambiguous'),
      text('{"intent": "maybe"}'),
      text('Connecting to postgres://staging.internal:5432/app.'),
    ]);
    const result = await convo.run('Connect to the DB', model);
    expect(result.ledger.recall).toMatchObject({
      recall: true,
      by: 'deterministic',
      intent: 'ambiguous',
      fallback: { from: 'model', code: 'MODEL_OUTPUT' },
    });
    // Two attempts (the repair included), then the turn with the recalled fact.
    expect(bodies()).toHaveLength(3);
    expect(JSON.stringify(bodies()[2]!.messages)).toContain('staging.internal');
  });

  it('falls back when the endpoint does not answer within the time limit', async () => {
    // Routed by request, not by arrival order: the classifier's request (structured output) hangs, the
    // turn's is answered, even when the 200 ms run out before the classifier's request reaches the server.
    const { convo, model } = await turnWith(
      (res, body, req) => (body.response_format ? hang : text('Done.'))(res, body, req),
      200,
    );
    const result = await convo.run('Connect to the DB', model);
    expect(result.ledger.recall).toMatchObject({
      by: 'deterministic',
      recall: true,
      fallback: { from: 'model', code: 'TIMEOUT' },
    });
  });

  it('a cheaper model writes the offloaded output’s summary through the same endpoint', async () => {
    const { model, bodies } = await serve([
      toolCalls({ id: 'c1', name: 'dump', arguments: {} }),
      text('Deploy failed: the TLS certificate expired.'),
      text('It failed.'),
    ]);
    const stores = createInMemoryStores();
    const log = Array.from({ length: 120 }, (_, i) => `[deploy] chunk ${i} uploaded`).join('\n');
    const kioku = new KiokuBuilder({ stores })
      .use({
        name: 'dump',
        toolkit: {
          name: 'dump',
          tools: [
            defineTool({ name: 'dump', description: 'Dump.', parameters: z.object({}), execute: () => log }),
          ],
        },
      })
      .withToolOutputOffload({ summaryModel: model })
      .build();
    const convo = await kioku.startConversation(alice);
    const result = await convo.run('deploy', model);
    const placeholder = result.messages.find((m) => m.role === 'tool')!.content;
    expect(placeholder).toContain('Summary: Deploy failed: the TLS certificate expired.');
    const [detail] = await stores.details.list(alice);
    expect(detail!.metadata).toMatchObject({ summarizer: 'model' });
    expect(JSON.stringify(bodies()[1]!.messages)).toContain('[deploy] chunk 0 uploaded');
  });
});
