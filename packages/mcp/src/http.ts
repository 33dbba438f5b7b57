import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type KiokuStores, type TelemetryOptions, type Tool, ValidationError } from '@kioku/core';
import { traceToolCalls } from '@kioku/core/model';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isLoopback, urlHost } from './address.js';
import { identityScope, type McpIdentity } from './identity.js';
import { MCP_LIMITS, type McpLimits } from './limits.js';
import { createMemoryServer } from './server.js';
import type { TokenTable } from './tokens.js';

/**
 * Who an HTTP request is: a bearer token from a table (any address), or one fixed identity without
 * authentication (loopback addresses only: anything that can reach the port is that user).
 */
export type HttpAuth = { tokens: TokenTable } | { identity: McpIdentity };

export interface HttpServerOptions {
  stores: KiokuStores;
  /** From `memoryTools(stores, toolsets)`; shared by every request. */
  tools: ReadonlyMap<string, Tool>;
  host: string;
  /** 0 picks a free port (see `port` of the running server). */
  port: number;
  auth: HttpAuth;
  /** The MCP endpoint (default `/mcp`); every other path is 404. */
  path?: string;
  limits?: Partial<McpLimits>;
  /**
   * OpenTelemetry (see `TelemetryOptions` of `@kioku/core`): a span per tool call, `execute_tool <tool>`.
   * Default: the providers the app's SDK registered (none registered: no spans).
   */
  telemetry?: TelemetryOptions;
  /**
   * Browser origins allowed to call (e.g. `https://app.example.com`). A request with any other `Origin`
   * is refused with 403; requests without one (every non-browser client) are not affected. On a loopback
   * address, `http(s)://localhost|127.0.0.1|[::1]` origins are allowed too.
   */
  allowedOrigins?: readonly string[];
  /**
   * Host names the `Host` header may carry (DNS rebinding protection). On a loopback address `localhost`,
   * `127.0.0.1` and `[::1]` always are, and nothing else unless listed; elsewhere the header is checked
   * only when this is given.
   */
  allowedHosts?: readonly string[];
  /** Unexpected errors while answering a request (the client gets a 500 without details). */
  onError?: (error: unknown) => void;
}

export interface RunningHttpServer {
  /** The endpoint clients connect to, e.g. `http://127.0.0.1:8765/mcp`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stop accepting requests and close open connections. */
  close(): Promise<void>;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const REALM = 'kioku';

function send(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
}

/**
 * A refusal before the body is read (404, 403, 401, 405, 413): the connection is closed once the answer
 * is sent, so the rest of the body (an unauthenticated upload of any size) is never read. Node would
 * otherwise read it to the end to keep the connection alive.
 */
function refuse(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  send(res, status, message, { ...headers, connection: 'close' });
}

/** The host name of a `Host` header or an origin's URL, lower case, IPv6 in brackets; null if unparsable. */
function hostnameOf(authority: string): string | null {
  try {
    return new URL(`http://${authority}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Read a request body of at most `maxBytes`; null when it is larger: by its Content-Length before any of
 * it is read, or as soon as a streamed one goes over (reading stops; the caller's 413 closes the
 * connection).
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        chunks.length = 0;
        req.off('data', onData);
        req.pause();
        resolve(null);
      } else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(total > maxBytes ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Kioku's memory over MCP Streamable HTTP, stateless: every POST is authenticated on its own and answered
 * by a fresh server in the caller's scope (JSON responses, no sessions, no server-to-client stream, so
 * GET and DELETE are 405). Before anything is parsed a request passes, in order: the path, the `Host`
 * and `Origin` checks (403), the bearer token (401 with `WWW-Authenticate`) and the body size (413);
 * each of those refusals closes the connection rather than read the rest of the body.
 * A loopback-only identity on another address is refused at start.
 */
export async function serveHttp(options: HttpServerOptions): Promise<RunningHttpServer> {
  const limits = { ...MCP_LIMITS, ...options.limits };
  const traceToolCall = traceToolCalls(options.telemetry);
  const path = options.path ?? '/mcp';
  const loopback = isLoopback(options.host);
  if ('identity' in options.auth) {
    if (!loopback) {
      throw new ValidationError(
        `Refusing to serve ${options.host} without tokens: anyone who can reach it would read and write ` +
          `user "${options.auth.identity.userId}"'s memory. Give a tokens file, or listen on 127.0.0.1.`,
      );
    }
    identityScope(options.auth.identity);
  }
  const allowedHosts = new Set(
    [...(loopback ? LOOPBACK_NAMES : []), ...(options.allowedHosts ?? [])].map((h) => h.toLowerCase()),
  );
  const checkHost = loopback || (options.allowedHosts?.length ?? 0) > 0;
  const allowedOrigins = new Set(options.allowedOrigins ?? []);

  function originAllowed(origin: string): boolean {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (allowedOrigins.has(url.origin)) return true;
    return (
      loopback &&
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      LOOPBACK_NAMES.includes(url.hostname)
    );
  }

  function authenticate(req: IncomingMessage, res: ServerResponse): McpIdentity | null {
    const { auth } = options;
    if ('identity' in auth) return auth.identity;
    const check = auth.tokens.check(req.headers.authorization);
    if (check.ok) return check.identity;
    const challenge =
      check.reason === 'missing'
        ? `Bearer realm="${REALM}"`
        : `Bearer realm="${REALM}", error="invalid_token", error_description="The token is not valid"`;
    refuse(
      res,
      401,
      check.reason === 'missing'
        ? 'Authorization required: send Authorization: Bearer <token>.'
        : 'The bearer token is not valid.',
      { 'www-authenticate': challenge },
    );
    return null;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return refuse(res, 404, `Not found: the MCP endpoint is ${path}.`);
    const host = hostnameOf(req.headers.host ?? '');
    if (checkHost && (host === null || !allowedHosts.has(host))) {
      return refuse(res, 403, `Host "${req.headers.host ?? ''}" is not allowed.`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) {
      return refuse(res, 403, `Origin "${origin}" is not allowed.`);
    }
    const identity = authenticate(req, res);
    if (!identity) return;
    if (req.method !== 'POST') {
      return refuse(res, 405, 'This server is stateless: send MCP messages with POST.', { allow: 'POST' });
    }
    const body = await readBody(req, limits.maxBodyBytes);
    if (body === null) {
      return refuse(res, 413, `The request body is over ${limits.maxBodyBytes} bytes.`);
    }
    let message: unknown;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch (error) {
      return send(res, 400, `Parse error: ${(error as Error).message}`, {}, -32700);
    }
    const server = createMemoryServer({
      stores: options.stores,
      tools: options.tools,
      identity,
      limits,
      traceToolCall,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.onError?.(error);
      send(res, 500, 'Internal server error.', {}, -32603);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${urlHost(options.host)}:${port}${path}`,
    host: options.host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
