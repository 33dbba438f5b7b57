import { describe, expect, it } from 'vitest';
import { createInMemoryStores, KiokuBuilder } from '../src/index.js';
import { ScriptedModel } from '../src/testing.js';

describe('ScriptedModel', () => {
  it('drives a whole turn: a tool call the stack runs, then the answer; the prompts are kept', async () => {
    const stores = createInMemoryStores();
    const kioku = new KiokuBuilder({ stores }).withFacts().build();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'create_memory', arguments: { title: 'Diet', content: 'Is vegetarian' } }] },
      (request) => `I see ${request.messages.filter((m) => m.role === 'tool').length} tool result.`,
    ]);
    const conversation = await kioku.startConversation({ userId: 'alice' });
    const turn = await conversation.run('I am vegetarian, remember that.', model);
    expect(turn.answer).toBe('I see 1 tool result.');
    expect((await stores.facts.list({ userId: 'alice' })).map((f) => f.content)).toEqual(['Is vegetarian']);
    expect(model.requests).toHaveLength(2);
    expect(model.remaining).toBe(0);
  });

  it('sends an object as JSON text, and refuses a call past the end of the script', async () => {
    const model = new ScriptedModel([{ json: { facts: [] } }]);
    const request = { messages: [{ role: 'user' as const, content: 'x' }], tools: [] };
    expect((await model.complete(request)).content).toBe('{"facts":[]}');
    await expect(model.complete(request)).rejects.toMatchObject({ code: 'VALIDATION' });
  });
});
