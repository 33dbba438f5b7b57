import type { Readable, Writable } from 'node:stream';
import type { KiokuStores, TelemetryOptions, Tool } from '@kioku/core';
import { SeenVersions, traceToolCalls } from '@kioku/core/model';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpIdentity } from './identity.js';
import { MCP_LIMITS, type McpLimits } from './limits.js';
import { createMemoryServer } from './server.js';

export interface StdioServerOptions {
  stores: KiokuStores;
  tools: ReadonlyMap<string, Tool>;
  /** The one user (and agent, thread) of this process, fixed at start. */
  identity: McpIdentity;
  limits?: Partial<McpLimits>;
  /**
   * OpenTelemetry (see `TelemetryOptions` of `@kioku/core`): a span per tool call, `execute_tool <tool>`.
   * Default: the providers the app's SDK registered (none registered: no spans).
   */
  telemetry?: TelemetryOptions;
  /** Where messages come from and go to (default the process's stdin and stdout). */
  stdin?: Readable;
  stdout?: Writable;
  /** Transport errors, e.g. a message over `maxBodyBytes` (the connection is then closed). */
  onError?: (error: Error) => void;
}

export interface RunningStdioServer {
  /** Settles when the client closes stdin or `close()` is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Kioku's memory over MCP stdio: one client, one identity for the life of the process. The connection
 * keeps the versions of the records the client was shown, so an edit of a fact, plan or working-memory
 * entry that changed since it was read is refused with CONFLICT, as in a conversation. A message over
 * `maxBodyBytes` closes the connection.
 */
export async function serveStdio(options: StdioServerOptions): Promise<RunningStdioServer> {
  const limits = { ...MCP_LIMITS, ...options.limits };
  const traceToolCall = traceToolCalls(options.telemetry);
  const stdin = options.stdin ?? process.stdin;
  const server = createMemoryServer({
    stores: options.stores,
    tools: options.tools,
    identity: options.identity,
    seen: new SeenVersions(),
    limits,
    traceToolCall,
  });
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout, {
    maxBufferSize: limits.maxBodyBytes,
  });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  server.server.onerror = (error) => {
    // The SDK's stdio buffer refuses a message over its size and closes the connection.
    const tooLarge = /exceeded maximum size/.test(error.message);
    options.onError?.(
      tooLarge
        ? new Error(`A message over ${limits.maxBodyBytes} bytes arrived; the connection is closed.`, {
            cause: error,
          })
        : error,
    );
  };
  const close = () => server.close();
  stdin.once('end', () => void close());
  await server.connect(transport);
  return { closed, close };
}
