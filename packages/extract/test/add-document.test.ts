import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryDocumentStore } from '@kioku/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDocumentFromSource } from '../src/index.js';
import { makeDocx } from './fixtures.js';

const shared = { userId: 'shared', agentId: 'python-expert' };
let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kioku-add-'));
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('Remote style notes: prefer f-strings.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('addDocumentFromSource', () => {
  it('stores the extracted text with its source under the given scope, searchable by chunk', async () => {
    const store = new InMemoryDocumentStore();
    const path = join(dir, 'handbook.docx');
    await writeFile(path, await makeDocx('Handbook', ['Use type hints everywhere.']));
    const doc = await addDocumentFromSource(store, shared, path, {
      tags: ['python'],
      description: 'Team rules',
    });
    expect(doc).toMatchObject({
      userId: 'shared',
      agentId: 'python-expert',
      title: 'handbook.docx',
      text: 'Handbook\n\nUse type hints everywhere.',
      tags: ['python'],
      description: 'Team rules',
      source: { type: 'file', uri: path, mimeType: expect.stringContaining('wordprocessingml') },
    });
    const hits = await store.search(shared, { query: 'type hints' });
    expect(hits[0]?.documentId).toBe(doc.id);
    expect(await store.list({ userId: 'alice', agentId: 'python-expert' })).toEqual([]);
  });

  it('prefers the document’s own title, then an explicit one, and names URLs by host and path', async () => {
    const store = new InMemoryDocumentStore();
    const md = join(dir, 'guide.md');
    await writeFile(md, '# Python Style\n\nfour spaces');
    expect((await addDocumentFromSource(store, shared, md)).title).toBe('Python Style');
    expect((await addDocumentFromSource(store, shared, md, { title: 'Mine', id: 'style' })).title).toBe(
      'Mine',
    );
    const remote = await addDocumentFromSource(store, shared, `${base}/docs/notes`);
    expect(remote.title).toBe(`${new URL(base).host}/docs/notes`);
    expect(remote.source).toEqual({ type: 'url', uri: `${base}/docs/notes`, mimeType: 'text/plain' });
    expect(await store.list(shared)).toHaveLength(3);
  });

  it('writes nothing when extraction fails', async () => {
    const store = new InMemoryDocumentStore();
    await expect(addDocumentFromSource(store, shared, join(dir, 'nope.pdf'))).rejects.toMatchObject({
      code: 'STORAGE',
    });
    await expect(
      addDocumentFromSource(store, shared, { data: new Uint8Array([0]), name: 'x.bin' }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
    expect(await store.list(shared)).toEqual([]);
  });
});
