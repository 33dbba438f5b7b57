import { createServer } from 'node:net';

/** The shared servers' ports: never handed out, even when free. */
const SHARED_PORTS = new Set([5432, 6379, 6432]);

/** A loopback port nobody listens on right now (never a shared server's). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port !== 0 && !SHARED_PORTS.has(port)) return port;
  }
}
