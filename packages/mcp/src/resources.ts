import type { KiokuStores, Scope } from '@kioku/core';
import { IdSchema } from '@kioku/core/store';
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { tooLarge } from './output.js';

/** The JSON-RPC error code the MCP specification gives a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

/** Facts listed by `kioku://facts` (most recently updated first); `total` says how many there are. */
export const LISTED_FACTS = 200;
/** Details listed by `resources/list` (newest first). */
export const LISTED_DETAILS = 50;

export const FACTS_URI = 'kioku://facts';
export const PLAN_URI = 'kioku://plan';

function notFound(what: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `${what} was not found in this user's memory.`);
}

/** A record as a JSON resource, refused (not cut) over the output limit. */
function json(uri: URL, value: unknown, maxOutputBytes: number): ReadResourceResult {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxOutputBytes) {
    const { error } = tooLarge(`Resource ${uri.href}`, bytes, maxOutputBytes);
    throw new McpError(-32603, `${error.code}: ${error.message}`, error.details);
  }
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
}

/** An id from a URI: one that is not a valid record id names nothing. */
function idFrom(value: string | string[] | undefined, what: string): string {
  const id = decodeURIComponent(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
  if (!IdSchema.safeParse(id).success) throw notFound(`${what} "${id}"`);
  return id;
}

/**
 * Browsing for people and clients (read-only, in the connection's scope like every tool): the user's
 * facts, one fact or one detail by id (`kioku://facts/{id}`, `kioku://details/{id}`), the current plan.
 * Records are JSON data; another user's id reads as not found, exactly like an id that does not exist.
 */
export function registerResources(
  server: McpServer,
  stores: KiokuStores,
  scope: Readonly<Scope>,
  maxOutputBytes: number,
): void {
  server.registerResource(
    'facts',
    FACTS_URI,
    {
      title: 'Facts',
      description: `What is remembered about the user: the ${LISTED_FACTS} most recently updated facts, and how many there are.`,
      mimeType: 'application/json',
    },
    async (uri) => {
      const [facts, total] = await Promise.all([
        stores.facts.list(scope, { order: 'updated', limit: LISTED_FACTS }),
        stores.facts.count(scope),
      ]);
      return json(uri, { total, facts }, maxOutputBytes);
    },
  );

  server.registerResource(
    'fact',
    new ResourceTemplate('kioku://facts/{id}', { list: undefined }),
    { title: 'Fact', description: 'One fact by its id.', mimeType: 'application/json' },
    async (uri, { id }) => {
      const factId = idFrom(id, 'Fact');
      const fact = await stores.facts.get(scope, factId);
      if (!fact) throw notFound(`Fact "${factId}"`);
      return json(uri, fact, maxOutputBytes);
    },
  );

  server.registerResource(
    'detail',
    new ResourceTemplate('kioku://details/{id}', {
      list: async () => {
        const details = await stores.details.list(scope, { limit: LISTED_DETAILS });
        return {
          resources: details.map((detail) => ({
            uri: `kioku://details/${detail.id}`,
            name: detail.id,
            title: detail.description,
            description: `${detail.type}, ${detail.tokenCount} tokens, ${detail.createdAt}`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Detail',
      description:
        'One stored detail (content kept with store_memory or an offloaded tool output) by its id.',
      mimeType: 'application/json',
    },
    async (uri, { id }) => {
      const detailId = idFrom(id, 'Detail');
      const detail = await stores.details.get(scope, detailId);
      if (!detail) throw notFound(`Detail "${detailId}"`);
      return json(uri, detail, maxOutputBytes);
    },
  );

  server.registerResource(
    'plan',
    PLAN_URI,
    {
      title: 'Current plan',
      description: "The plan of this connection's thread (goal, steps, context notes), or null.",
      mimeType: 'application/json',
    },
    async (uri) => {
      const threadId = scope.threadId;
      const plan = threadId === undefined ? null : await stores.plans.get({ ...scope, threadId });
      return json(uri, { plan }, maxOutputBytes);
    },
  );
}
