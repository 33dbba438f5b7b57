import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ALICE, startHttp } from './helpers.js';

/** Bytes the server may take in before it is judged to be reading the upload instead of closing. */
const READ_ON_LIMIT = 256 * 1024 * 1024;

/**
 * Send a request's head and then an endless chunked body, as fast as the server takes it, and resolve
 * with the status line once the server has answered and closed the connection. A server that reads the
 * body to the end (to keep the connection alive) keeps taking bytes: past READ_ON_LIMIT (far beyond what
 * socket buffers hold) this rejects. Decided by bytes, not by a clock, so a slow machine gives the same
 * verdict.
 */
function uploadUntilClosed(url: string, method: string, pathname: string, headers: Record<string, string>) {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', () => {}); // a write after the server closed: expected
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    const chunk = `${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`;
    const pump = () => {
      while (!socket.destroyed) {
        if (socket.bytesWritten > READ_ON_LIMIT) {
          socket.destroy();
          reject(new Error(`the server kept reading: ${answer.split('\r\n')[0]}`));
          return;
        }
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      const head = Object.entries({ host: `${hostname}:${port}`, 'transfer-encoding': 'chunked', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`${method} ${pathname} HTTP/1.1\r\n${head}\r\n`);
      pump();
    });
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
