import { type Scope, ValidationError } from '@kioku/core';
import { IdSchema } from '@kioku/core/store';
import { z } from 'zod';

/**
 * Whose memory an MCP connection reads and writes, fixed when the server starts (stdio) or by the bearer
 * token (HTTP). Never taken from a tool argument.
 */
export interface McpIdentity {
  userId: string;
  /** Partitions the user's facts and working memory per agent, as in a conversation. */
  agentId?: string;
  /** The thread plans and the working-memory namespace (`session/<thread>`) belong to (default `mcp`). */
  threadId?: string;
}

/** The thread an identity without one uses: its plan and its working-memory namespace `session/mcp`. */
export const DEFAULT_THREAD = 'mcp';

export const McpIdentitySchema = z
  .object({ userId: IdSchema, agentId: IdSchema.optional(), threadId: IdSchema.optional() })
  .strict();

/** The scope every tool call and resource read of this identity runs in (frozen). */
export function identityScope(identity: McpIdentity): Readonly<Scope> {
  const parsed = McpIdentitySchema.safeParse(identity);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ValidationError(
      `Invalid MCP identity: ${issue?.path.join('.') || 'identity'} ${issue?.message ?? 'is invalid'}.`,
    );
  }
  const { userId, agentId, threadId } = parsed.data;
  return Object.freeze({
    userId,
    ...(agentId === undefined ? {} : { agentId }),
    threadId: threadId ?? DEFAULT_THREAD,
  });
}
