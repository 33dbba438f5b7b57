import { z } from 'zod';

const KiB = 1024;
const MiB = 1024 * KiB;

/** What one request may send and one answer may return; the same for every client. */
export interface McpLimits {
  /** Bytes of one HTTP request body (a JSON-RPC message). Larger bodies get HTTP 413; nothing is read. */
  maxBodyBytes: number;
  /**
   * Bytes of one tool result or resource, as JSON. A larger result becomes a tool error with code
   * `OUTPUT_TOO_LARGE` (a resource read, a JSON-RPC error), so a client never receives a cut-off answer.
   */
  maxOutputBytes: number;
  /** Array elements and object members in one call's arguments (the SDK's check, before any parsing). */
  maxArgumentElements: number;
}

export const MCP_LIMITS: Readonly<McpLimits> = Object.freeze({
  // The SDK transport's own default; a 4 MiB working-memory value fits, JSON-escaped text mostly does too.
  maxBodyBytes: 4 * MiB,
  // About 250k tokens, more than any model reads in one tool result.
  maxOutputBytes: 1 * MiB,
  maxArgumentElements: 10_000,
});

const Bytes = z
  .number()
  .int()
  .min(1_024)
  .max(1_024 * MiB);

export const McpLimitsSchema = z
  .object({
    maxBodyBytes: Bytes.default(MCP_LIMITS.maxBodyBytes),
    maxOutputBytes: Bytes.default(MCP_LIMITS.maxOutputBytes),
    maxArgumentElements: z.number().int().min(10).max(1_000_000).default(MCP_LIMITS.maxArgumentElements),
  })
  .strict();
