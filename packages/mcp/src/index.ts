export { isLoopback, type ListenAddress, parseListenAddress } from './address.js';
export { type HttpAuth, type HttpServerOptions, type RunningHttpServer, serveHttp } from './http.js';
export type { McpIdentity } from './identity.js';
export { MCP_LIMITS, type McpLimits, McpLimitsSchema } from './limits.js';
export { OUTPUT_TOO_LARGE } from './output.js';
export { createMemoryServer, type MemoryServerOptions, SERVER_VERSION } from './server.js';
export { type RunningStdioServer, type StdioServerOptions, serveStdio } from './stdio.js';
export { newToken, TokenTable } from './tokens.js';
export {
  DEFAULT_TOOLSETS,
  type MemoryToolsOptions,
  memoryTools,
  parseToolsets,
  TOOLSETS,
  type Toolset,
} from './toolsets.js';
