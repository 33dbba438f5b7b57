import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ALICE, startHttp } from './helpers.js';

/**
 * Send a request's head and a first chunk of an endless chunked body, keep sending chunks, and resolve
 * with the status line once the server has answered and closed the connection. A server that reads the
 * body to the end (to keep the connection alive) never closes it, and this never resolves.
 */
function uploadUntilClosed(url: string, method: string, pathname: string, headers: Record<string, string>) {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    let pump: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', () => {}); // a write after the server closed: expected
    socket.on('close', () => {
      clearInterval(pump);
      resolve(answer.split('\r\n')[0] ?? '');
    });
    socket.on('connect', () => {
      const head = Object.entries({ host: `${hostname}:${port}`, 'transfer-encoding': 'chunked', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`${method} ${pathname} HTTP/1.1\r\n${head}\r\n`);
      const chunk = `${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`;
      socket.write(chunk);
      pump = setInterval(() => {
        if (!socket.destroyed) socket.write(chunk);
      }, 5);
    });
    setTimeout(
      () => reject(new Error(`the server kept reading: ${answer.split('\r\n')[0]}`)),
      15_000,
    ).unref();
  });
}

describe('refusals close the connection instead of reading the upload', () => {
  it.each([
    ['401 without a token', 'POST', '/mcp', {}, '401'],
    ['403 for a foreign Origin', 'POST', '/mcp', { origin: 'http://evil.example' }, '403'],
    ['404 for another path', 'POST', '/elsewhere', {}, '404'],
    ['405 for a GET with a body', 'GET', '/mcp', { authorization: `Bearer ${ALICE}` }, '405'],
    ['413 for a streamed body over the limit', 'POST', '/mcp', { authorization: `Bearer ${ALICE}` }, '413'],
  ])('%s', async (_, method, pathname, headers, status) => {
    const server = await startHttp({ limits: { maxBodyBytes: 4_096 } });
    const statusLine = await uploadUntilClosed(server.url, method, pathname, {
      'content-type': 'application/json',
      ...headers,
    });
    expect(statusLine).toBe(`HTTP/1.1 ${status} ${statusText(status)}`);
  });
});

function statusText(status: string): string {
  return {
    '401': 'Unauthorized',
    '403': 'Forbidden',
    '404': 'Not Found',
    '405': 'Method Not Allowed',
    '413': 'Payload Too Large',
  }[status]!;
}
