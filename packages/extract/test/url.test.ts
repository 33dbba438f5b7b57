import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractText } from '../src/index.js';
import { MIME_TYPES } from '../src/mime.js';
import { ARTICLE_HTML, makePdf } from './fixtures.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base: string;
const routes = new Map<string, Handler>();
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  const pdf = await makePdf([['Served over HTTP.']], 'Remote PDF');
  routes.set('/article', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(ARTICLE_HTML);
  });
  routes.set('/notes.md', (_req, res) => {
    // Many servers call Markdown text/plain; the extension says better.
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('# Remote Notes\n\nfrom the server');
  });
  routes.set('/latin1', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
    res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café"
  });
  routes.set('/download', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(pdf);
  });
  routes.set('/moved', (_req, res) => {
    res.writeHead(302, { location: '/article' });
    res.end();
  });
  routes.set('/loop', (_req, res) => {
    res.writeHead(302, { location: '/loop' });
    res.end();
  });
  routes.set('/to-ftp', (_req, res) => {
    res.writeHead(301, { location: 'ftp://127.0.0.1/secret.txt' });
    res.end();
  });
  routes.set('/big', (_req, res) => {
    // No Content-Length: the limit must hold while streaming.
    res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
    const chunk = 'x'.repeat(1024);
    let sent = 0;
    const push = () => {
      while (sent < 64 && res.write(chunk)) sent++;
      if (sent >= 64) res.end();
      else res.once('drain', push);
    };
    push();
  });
  routes.set('/declared-big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * 1024 * 1024) });
    res.write('x');
    // Never finishes; the client must not wait for it.
  });
  routes.set('/slow', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial');
    // Never ends: only the timeout stops the client.
  });
  routes.set('/image', (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });
  server = createServer((req, res) => {
    seen.push(req);
    const handler = routes.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (handler) handler(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('extractText: URLs', () => {
  it('fetches an HTML page and returns its readable text and title', async () => {
    const result = await extractText(`${base}/article`);
    expect(result.title).toBe('Python Packaging Guide');
    expect(result.text).toContain('Use virtual environments for every project.');
    expect(result.text).not.toContain('Home');
    expect(result.mimeType).toBe(MIME_TYPES.html);
    expect(result.source).toEqual({ type: 'url', uri: `${base}/article`, mimeType: MIME_TYPES.html });
    const request = seen.at(-1)!;
    expect(request.headers['user-agent']).toBe('kioku-extract');
    expect(request.headers.accept).toContain('text/html');
  });

  it('lets the extension refine text/plain to Markdown and honours the charset', async () => {
    const notes = await extractText(new URL(`${base}/notes.md`));
    expect(notes).toMatchObject({ title: 'Remote Notes', mimeType: MIME_TYPES.markdown });
    expect((await extractText({ url: `${base}/latin1` })).text).toBe('café');
  });

  it('recognises a PDF served as application/octet-stream', async () => {
    const result = await extractText(`${base}/download`);
    expect(result).toMatchObject({
      title: 'Remote PDF',
      text: 'Served over HTTP.',
      mimeType: MIME_TYPES.pdf,
    });
  });

  it('follows redirects, checking each hop, up to the limit', async () => {
    const moved = await extractText(`${base}/moved`);
    expect(moved.title).toBe('Python Packaging Guide');
    expect(moved.source.uri).toBe(`${base}/moved`);
    await expect(extractText(`${base}/loop`, { maxRedirects: 3 })).rejects.toMatchObject({
      code: 'STORAGE',
      message: expect.stringContaining('more than 3 redirects'),
    });
    await expect(extractText(`${base}/to-ftp`)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('Only http and https'),
    });
  });

  it('turns HTTP errors into StorageErrors with the status', async () => {
    await expect(extractText(`${base}/nothing`)).rejects.toMatchObject({
      code: 'STORAGE',
      details: { status: 404 },
      message: expect.stringContaining('HTTP 404'),
    });
  });

  it('stops reading a body that passes maxBytes, declared or not', async () => {
    await expect(extractText(`${base}/big`, { maxBytes: 8 * 1024 })).rejects.toMatchObject({
      code: 'VALIDATION',
      details: { maxBytes: 8 * 1024 },
    });
    await expect(extractText(`${base}/declared-big`, { maxBytes: 1024 * 1024 })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('byte limit'),
    });
  });

  it('times out a server that never finishes', async () => {
    // /slow never ends, so only the timeout can settle the call (a hang would fail at the test limit);
    // no elapsed-time bound, which a busy machine stretches.
    const error = await extractText(`${base}/slow`, { timeoutMs: 300 }).catch((e) => e);
    expect(error).toMatchObject({
      code: 'STORAGE',
      message: expect.stringContaining('timed out after 300 ms'),
    });
    expect(error.cause).toBeDefined();
  });

  it('rejects with the caller’s abort reason', async () => {
    const controller = new AbortController();
    const pending = extractText(`${base}/slow`, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user cancelled')), 50);
    await expect(pending).rejects.toThrow('user cancelled');
  });

  it('reports unreachable servers as StorageErrors with the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await extractText(`http://127.0.0.1:${port}/x.txt`).catch((e) => e);
    expect(error).toMatchObject({ code: 'STORAGE' });
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('refuses unsupported content types and URLs with credentials', async () => {
    await expect(extractText(`${base}/image`)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('image/png'),
    });
    await expect(extractText(`http://user:pw@127.0.0.1:1/x`)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('credentials'),
    });
  });
});
