import { z } from 'zod';
import { parseScope, type Scope } from '../../foundation/scope.js';
import { parseOrThrow } from '../../foundation/validation.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { DocumentStore } from '../../store/documents/store.js';
import { KNOWLEDGE_MIDDLEWARE, type KnowledgeStrategy, knowledgeMiddleware } from './middleware.js';

export interface KnowledgeDocumentsOptions {
  /**
   * Where the knowledge documents live (add them with `store.create`, or from files and URLs with
   * `addDocumentFromSource` from `@kioku/extract`).
   */
  store: DocumentStore;
  /**
   * `full-text` (default): every document's text, oldest first, cut to the
   * budget. `indexed` (IndexedRetrieval): only the chunks that match the user message, best first.
   */
  strategy?: KnowledgeStrategy;
  /**
   * Most tokens for the block. The budget's `knowledge` share (6000 by default) applies
   * too; the smaller one wins.
   */
  maxTokens?: number;
  /**
   * Whose documents to read instead of the turn's user + agent. Documents are stored per user + agent;
   * knowledge every user of an agent shares is kept under one owner, e.g.
   * `{ userId: 'shared', agentId: 'python-expert' }` — add the documents with that same scope. Only the
   * middleware reads it (knowledge has no tools), so no user can write to it through the model.
   */
  owner?: Pick<Scope, 'userId' | 'agentId'>;
  /** `indexed`: how many chunks to retrieve at most before the budget is applied (default 5). */
  topK?: number;
}

const OptionsSchema = z.object({
  strategy: z.enum(['full-text', 'indexed']).default('full-text'),
  maxTokens: z.number().int().min(1).optional(),
  topK: z.number().int().min(1).max(200).default(5),
});

/**
 * Knowledge documents (`withKnowledge()`): the agent's knowledge documents injected as a
 * `[STATIC_KNOWLEDGE]` system message every turn, whole or retrieved by the user message. No toolkit.
 */
export function knowledgeDocuments(options: KnowledgeDocumentsOptions): MemoryFeature {
  const { strategy, maxTokens, topK } = parseOrThrow(OptionsSchema, options, 'knowledgeDocuments options');
  const owner = options.owner === undefined ? undefined : ownerScope(options.owner);
  return {
    name: KNOWLEDGE_MIDDLEWARE,
    middleware: knowledgeMiddleware({
      store: options.store,
      strategy,
      topK,
      ...(maxTokens === undefined ? {} : { maxTokens }),
      ...(owner === undefined ? {} : { owner }),
    }),
  };
}

function ownerScope(owner: Pick<Scope, 'userId' | 'agentId'>): Scope {
  const { userId, agentId } = parseScope({ userId: owner.userId, agentId: owner.agentId });
  return agentId === undefined ? { userId } : { userId, agentId };
}
