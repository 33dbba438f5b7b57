import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Collections, HttpError } from './collections.js';
import { BadRequest, Unsupported } from './filter.js';
import { coerceQueryValue, OpenApiSpec } from './schema.js';

/** A request or response that did not match Qdrant's OpenAPI schema, or a request this server cannot serve. */
export interface Violation {
  kind: 'request' | 'response' | 'unknown-endpoint' | 'unsupported';
  method: string;
  path: string;
  operationId?: string;
  errors: string[];
  /** The offending body (truncated). */
  body?: string;
}

export interface QdrantTestServerOptions {
  /** Qdrant's OpenAPI document (default: this package's `openapi/qdrant-openapi.json`, or `QDRANT_OPENAPI_SCHEMA`). */
  spec?: OpenApiSpec;
  /** Loopback port (default: any free one). */
  port?: number;
}

/** The version the root endpoint reports: a Qdrant the client (1.x) accepts as compatible. */
const SERVER_VERSION = '1.18.0';

let sharedSpec: OpenApiSpec | undefined;

const preview = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? undefined : text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
};

/**
 * An in-memory stand-in for the Qdrant REST endpoints `@kioku/store-qdrant` uses, on 127.0.0.1.
 *
 * Every request is matched to an operation of Qdrant's published OpenAPI document and its path, query
 * and body are validated against it; so is every response body this server sends. A request that does
 * not match is answered 400 and recorded in `violations`; a response that would not match is replaced by
 * a 500 and recorded; an endpoint or feature the server does not implement is answered 501 and recorded.
 * Tests assert that `violations` is empty.
 */
export class QdrantTestServer {
  readonly spec: OpenApiSpec;
  readonly violations: Violation[] = [];
  /** Every request that matched an operation, in order: for tests that check what the adapter sent. */
  readonly log: Array<{ operationId: string; query: Record<string, string>; body: unknown }> = [];
  readonly collections = new Collections();
  readonly #server: Server;
  readonly #port: number;
  #url: string | undefined;

  constructor(options: QdrantTestServerOptions = {}) {
    sharedSpec ??= options.spec ?? new OpenApiSpec();
    this.spec = options.spec ?? sharedSpec;
    this.#port = options.port ?? 0;
    this.#server = createServer((req, res) => {
      this.#serve(req, res).catch((error: unknown) => {
        this.#send(res, 500, { status: { error: `test server failure: ${error}` }, time: 0 });
      });
    });
  }

  /** Start listening; returns the base URL (`http://127.0.0.1:PORT`). */
  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}`;
    return this.#url;
  }

  get url(): string {
    if (!this.#url) throw new Error('the test server is not started');
    return this.#url;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The violations as one readable report (empty string when there are none). */
  report(): string {
    return this.violations
      .map(
        (v) =>
          `${v.kind}: ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}\n  ${v.errors.join('\n  ')}${v.body ? `\n  body: ${v.body}` : ''}`,
      )
      .join('\n');
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
    const started = performance.now();
    const matched = this.spec.match(method, url.pathname);
    if (!matched) {
      this.#violate({
        kind: 'unknown-endpoint',
        method,
        path: url.pathname,
        errors: ['no such operation in the OpenAPI schema'],
      });
      this.#send(res, 404, { status: { error: `Not found: ${method} ${url.pathname}` }, time: 0 });
      return;
    }
    const { operation, params } = matched;
    const where = { method, path: url.pathname, operationId: operation.operationId };
    const errors: string[] = [];

    for (const p of operation.parameters) {
      const value =
        p.in === 'path' ? params[p.name] : p.in === 'query' ? url.searchParams.get(p.name) : undefined;
      if (value === undefined || value === null) {
        if (p.required) errors.push(`missing ${p.in} parameter "${p.name}"`);
        continue;
      }
      const coerced = p.in === 'query' ? coerceQueryValue(value, p.schema) : value;
      if (!p.validate(coerced))
        errors.push(...OpenApiSpec.describe(p.validate).map((e) => `${p.in} "${p.name}": ${e}`));
    }
    const known = new Set(operation.parameters.filter((p) => p.in === 'query').map((p) => p.name));
    for (const name of url.searchParams.keys()) {
      if (!known.has(name)) errors.push(`query parameter "${name}" is not in the schema`);
    }

    let body: unknown;
    if (raw.trim() !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        errors.push('the body is not JSON');
      }
    }
    if (operation.body) {
      if (body === undefined) {
        if (operation.body.required) errors.push('a JSON body is required');
      } else if (!operation.body.validate(body)) {
        errors.push(...OpenApiSpec.describe(operation.body.validate).map((e) => `body ${e}`));
      }
    } else if (body !== undefined) {
      errors.push('this operation takes no body');
    }
    this.log.push({ operationId: operation.operationId, query: Object.fromEntries(url.searchParams), body });
    if (errors.length > 0) {
      this.#violate({ kind: 'request', ...where, errors, ...(raw ? { body: preview(raw)! } : {}) });
      this.#reply(res, operation, 400, {
        status: { error: `Format error in JSON body: ${errors[0]}` },
        time: 0,
      });
      return;
    }

    let status = 200;
    let payload: unknown;
    try {
      const result =
        operation.operationId === 'root'
          ? undefined
          : this.collections.handle(operation.operationId, params, body);
      const time = (performance.now() - started) / 1000;
      payload =
        operation.operationId === 'root'
          ? { title: 'qdrant - vector search engine (Kioku test server)', version: SERVER_VERSION }
          : { result, status: 'ok', time };
    } catch (error) {
      if (error instanceof Unsupported) {
        this.#violate({
          kind: 'unsupported',
          ...where,
          errors: [`not implemented by the test server: ${error.message}`],
        });
        status = 501;
      } else if (error instanceof BadRequest) status = 400;
      else if (error instanceof HttpError) status = error.status;
      else throw error;
      payload = { status: { error: (error as Error).message }, time: 0 };
    }
    this.#reply(res, operation, status, payload);
    return;
  }

  /** Validate the response body against the schema, then send it (or a 500 when it does not match). */
  #reply(
    res: ServerResponse,
    operation: OpenApiSpec['operations'][number],
    status: number,
    body: unknown,
  ): void {
    const validate = this.spec.responseValidator(operation, status);
    const where = { method: '(response)', path: operation.template, operationId: operation.operationId };
    if (validate === null) {
      if (status !== 501) {
        this.#violate({
          kind: 'response',
          ...where,
          errors: [`status ${status} is not a documented response`],
        });
      }
    } else if (validate && !validate(body)) {
      this.#violate({
        kind: 'response',
        ...where,
        errors: OpenApiSpec.describe(validate),
        body: preview(body)!,
      });
      this.#send(res, 500, {
        status: { error: 'the test server built a response that does not match the schema' },
        time: 0,
      });
      return;
    }
    this.#send(res, status, body);
  }

  #send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  #violate(violation: Violation): void {
    this.violations.push(violation);
  }
}

/** Start a server on a free loopback port. */
export async function startQdrantTestServer(options?: QdrantTestServerOptions): Promise<QdrantTestServer> {
  const server = new QdrantTestServer(options);
  await server.start();
  return server;
}
