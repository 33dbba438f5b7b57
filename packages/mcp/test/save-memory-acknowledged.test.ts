import { type ChatModel, type ChatModelRequest, createInMemoryStores } from '@kioku/core';
import { BackgroundQueue } from '@kioku/core/passes';
import { ScriptedModel } from '@kioku/core/testing';
import { describe, expect, it } from 'vitest';
import { ALICE, call, connect, startHttp } from './helpers.js';

/** A scripted model that does not answer until `answer()` is called. */
function heldModel(reply: unknown) {
  const scripted = new ScriptedModel([{ json: reply }]);
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const asked: ChatModelRequest[] = [];
  const model: ChatModel = {
    async complete(request) {
      asked.push(request);
      await answered;
      return scripted.complete(request);
    },
  };
  return { model, asked, answer };
}

describe('save_memory over MCP', () => {
  it("answers once the user's words are stored, without waiting for the model; the enrichment lands later", async () => {
    const stores = createInMemoryStores();
    const background = new BackgroundQueue();
    const { model, asked, answer } = heldModel({
      entries: [
        { content: 'User prefers metric units', category: 'user-preferences/units', tags: ['units'] },
        { content: 'User lives in Lisbon', category: 'personal/home', tags: ['lisbon'] },
      ],
    });
    const server = await startHttp({
      stores,
      toolsets: ['facts'],
      tools: { enrichment: { model, background } },
    });
    const client = await connect(server.url, ALICE);

    const words = 'I prefer metric units, and I live in Lisbon';
    const saved = await call(client, 'save_memory', { content: words });
    // The reply came while the model has not answered: the words are stored as given.
    expect(JSON.stringify(saved)).toMatch(/Saved memory/);
    const alice = { userId: 'alice' };
    expect((await stores.facts.list(alice)).map((f) => f.content)).toEqual([words]);
    expect(background.pending).toBe(1);

    answer();
    await background.flush();
    expect(asked).toHaveLength(1);
    expect((await stores.facts.list(alice)).map((f) => f.content).sort()).toEqual([
      'User lives in Lisbon',
      'User prefers metric units',
    ]);
    await background.close();
  });
});
