import { describe, expect, it } from 'vitest';
import { ALICE, call, callError, connect, startHttp } from './helpers.js';

describe('store → search → retrieve', () => {
  it('stores content, finds it by keywords and reads it back whole, by id or by placeholder', async () => {
    const server = await startHttp();
    const client = await connect(server.url, ALICE);
    const content = `npm http fetch GET 200 https://registry.npmjs.org/left-pad\n${'added 1 package\n'.repeat(200)}`;
    const stored = await call(client, 'store_memory', {
      content,
      description: 'npm install output',
      type: 'command_output',
    });
    expect(stored).toMatchObject({ type: 'command_output', id: expect.any(String) });
    expect(stored.ref).toBe(`[MemoryRef: ${stored.id} - npm install output - ${stored.tokens} tokens]`);

    const found = await call(client, 'search_memory', { query: 'npm install left-pad' });
    expect(found.details).toEqual([
      expect.objectContaining({ id: stored.id, ref: stored.ref, type: 'command_output' }),
    ]);

    // Quoted with its id and source: data, not instructions.
    const fenced = `[MEMORY_DETAIL ${stored.id} from command_output]\n${content}\n[END_MEMORY_DETAIL]`;
    expect(await call(client, 'retrieve_memory', { id: stored.id })).toEqual({ content: fenced });
    expect(await call(client, 'retrieve_memory', { id: stored.ref })).toEqual({ content: fenced });
  });

  it('answers bad arguments and unknown ids with the Kioku error code a conversation gets', async () => {
    const server = await startHttp();
    const client = await connect(server.url, ALICE);
    const missing = await callError(client, 'store_memory', { content: 'x' });
    expect(missing.code).toBe('VALIDATION');
    expect(missing.details).toEqual([{ path: 'description', message: expect.any(String) }]);
    expect((await callError(client, 'search_memory', { query: 'x', limit: 500 })).code).toBe('VALIDATION');
    expect(
      (await callError(client, 'store_memory', { content: 'x', description: 'd', type: 'Not Snake' })).code,
    ).toBe('VALIDATION');
    const unknown = await callError(client, 'retrieve_memory', { id: 'nope12345678' });
    expect(unknown).toEqual({ code: 'NOT_FOUND', message: 'No stored memory with id "nope12345678".' });
  });
});
