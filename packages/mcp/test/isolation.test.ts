import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { RESOURCE_NOT_FOUND } from '../src/resources.js';
import { ALICE, ALICE_CODER, BOB, call, callError, connect, startHttp } from './helpers.js';

async function readError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('one user per token', () => {
  it("a second user's token never sees the first user's memory: not by search, by id or by resource", async () => {
    const server = await startHttp();
    const alice = await connect(server.url, ALICE);
    const bob = await connect(server.url, BOB);
    const { id } = (await call(alice, 'store_memory', {
      content: 'The launch code is swordfish',
      description: 'launch code',
    })) as { id: string };
    const saved = await call(alice, 'save_memory', { content: 'Alice keeps the launch code in a drawer' });
    const factId = /Saved memory (\w+)/.exec(String(saved.text))![1]!;
    await call(alice, 'create_plan', { goal: 'Launch', steps: ['Find the code'] });
    await call(alice, 'save_to_working_memory', { key: 'secret', data: 'swordfish' });

    expect(await call(bob, 'search_memory', { query: 'launch code swordfish drawer' })).toEqual({
      details: [],
      facts: [],
    });
    expect((await callError(bob, 'retrieve_memory', { id })).code).toBe('NOT_FOUND');
    expect((await callError(bob, 'delete_memory', { id: factId })).code).toBe('NOT_FOUND');
    expect((await callError(bob, 'update_memory', { id: factId, content: 'gone' })).code).toBe('NOT_FOUND');
    expect(await call(bob, 'get_plan')).toEqual({ plan: null });
    expect((await callError(bob, 'get_from_working_memory', { key: 'secret' })).code).toBe('NOT_FOUND');
    expect((await callError(bob, 'get_from_working_memory', { key: 'session/mcp/secret' })).code).toBe(
      'NOT_FOUND',
    );

    expect((await readError(bob.readResource({ uri: `kioku://details/${id}` }))).code).toBe(
      RESOURCE_NOT_FOUND,
    );
    expect((await readError(bob.readResource({ uri: `kioku://facts/${factId}` }))).code).toBe(
      RESOURCE_NOT_FOUND,
    );
    const facts = await bob.readResource({ uri: 'kioku://facts' });
    expect(JSON.parse((facts.contents[0] as { text: string }).text)).toEqual({ total: 0, facts: [] });
    const listed = await bob.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual(['kioku://facts', 'kioku://plan']);

    // Alice still has all of it.
    expect(await call(alice, 'retrieve_memory', { id })).toEqual({
      content: `[MEMORY_DETAIL ${id} from note]\nThe launch code is swordfish\n[END_MEMORY_DETAIL]`,
    });
    const detail = await alice.readResource({ uri: `kioku://details/${id}` });
    expect(JSON.parse((detail.contents[0] as { text: string }).text)).toMatchObject({ id, userId: 'alice' });
  });

  it('arguments cannot choose the user: a userId argument is ignored, the token decides', async () => {
    const server = await startHttp();
    const alice = await connect(server.url, ALICE);
    const bob = await connect(server.url, BOB);
    await call(alice, 'store_memory', { content: 'alpha bravo charlie', description: 'alice note' });
    const found = await call(bob, 'search_memory', {
      query: 'alpha bravo',
      userId: 'alice',
      scope: { userId: 'alice' },
    });
    expect(found).toEqual({ details: [], facts: [] });
    const stored = await call(bob, 'store_memory', {
      content: 'delta',
      description: 'bob note',
      userId: 'alice',
    });
    expect(await server.stores.details.get({ userId: 'bob' }, stored.id as string)).not.toBeNull();
    expect(await server.stores.details.get({ userId: 'alice' }, stored.id as string)).toBeNull();
  });

  it("a token's agent partitions facts as in a conversation; details belong to the user", async () => {
    const server = await startHttp();
    const plain = await connect(server.url, ALICE);
    const coder = await connect(server.url, ALICE_CODER);
    await call(coder, 'save_memory', { content: 'Uses pnpm workspaces with Nx' });
    const { id } = (await call(coder, 'store_memory', {
      content: 'pnpm install log',
      description: 'log',
    })) as {
      id: string;
    };
    expect((await call(plain, 'search_memory', { query: 'pnpm Nx workspaces' })).facts).toEqual([]);
    expect((await call(coder, 'search_memory', { query: 'pnpm Nx workspaces' })).facts).toHaveLength(1);
    expect(await call(plain, 'retrieve_memory', { id })).toEqual({
      content: `[MEMORY_DETAIL ${id} from note]\npnpm install log\n[END_MEMORY_DETAIL]`,
    });
  });

  it('serves several clients of different users at once, each seeing only its own records', async () => {
    const server = await startHttp();
    const tokens = { alice: ALICE, bob: BOB };
    const clients = await Promise.all(
      Array.from({ length: 8 }, (_, i) => connect(server.url, i % 2 === 0 ? tokens.alice : tokens.bob)),
    );
    const stored = await Promise.all(
      clients.map(async (client, i) => {
        const ids: string[] = [];
        for (let n = 0; n < 5; n++) {
          const { id } = await call(client, 'store_memory', {
            content: `record ${n} of client ${i} zulu`,
            description: `client ${i} record ${n}`,
          });
          ids.push(id as string);
        }
        return ids;
      }),
    );
    const own = {
      alice: stored.filter((_, i) => i % 2 === 0).flat(),
      bob: stored.filter((_, i) => i % 2 === 1).flat(),
    };
    await Promise.all(
      clients.map(async (client, i) => {
        const user = i % 2 === 0 ? 'alice' : 'bob';
        const { details } = (await call(client, 'search_memory', {
          query: 'zulu record client',
          limit: 20,
        })) as {
          details: Array<{ id: string }>;
        };
        expect(details).toHaveLength(20);
        for (const hit of details) expect(own[user]).toContain(hit.id);
      }),
    );
    expect(await server.stores.details.list({ userId: 'alice' })).toHaveLength(20);
    expect(await server.stores.details.list({ userId: 'bob' })).toHaveLength(20);
  });
});
