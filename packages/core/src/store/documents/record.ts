import { z } from 'zod';
import { IdSchema } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import {
  IsoDateSchema,
  MetadataSchema,
  OptionalAgentIdSchema,
  TagsSchema,
  textSchema,
} from '../../foundation/record-fields.js';

/** Where a document's text came from. Text extraction (pdf, docx, URL) happens before the store. */
export const DocumentSourceSchema = z.object({
  type: z.enum(['text', 'file', 'url']),
  /** File path or URL it was read from. */
  uri: z.string().max(4096).optional(),
  mimeType: z.string().max(200).optional(),
});

export const DocumentChunkSchema = z.object({
  index: z.number().int().min(0),
  text: z.string(),
  tokenCount: z.number().int().min(0),
});

export type DocumentChunk = z.infer<typeof DocumentChunkSchema>;

const TitleSchema = z.string().trim().min(1).max(LIMITS.titleChars);
const DocumentTextSchema = textSchema(LIMITS.documentTextChars, 'text');

/** A knowledge document: extracted text, split into chunks for retrieval. */
export const KnowledgeDocumentSchema = z.object({
  id: IdSchema,
  userId: IdSchema,
  agentId: OptionalAgentIdSchema,
  title: TitleSchema,
  description: z.string().max(LIMITS.titleChars).optional(),
  tags: TagsSchema,
  source: DocumentSourceSchema,
  text: DocumentTextSchema,
  tokenCount: z.number().int().min(0),
  chunks: z.array(DocumentChunkSchema),
  metadata: MetadataSchema,
  addedAt: IsoDateSchema,
});

export type KnowledgeDocument = z.infer<typeof KnowledgeDocumentSchema>;

export const DocumentInputSchema = z.object({
  id: IdSchema.optional(),
  title: TitleSchema,
  text: DocumentTextSchema,
  description: z.string().max(LIMITS.titleChars).optional(),
  tags: TagsSchema.default([]),
  source: DocumentSourceSchema.default({ type: 'text' }),
  metadata: MetadataSchema.default({}),
});

export type DocumentInput = z.input<typeof DocumentInputSchema>;

export const DocumentQuerySchema = z.object({
  query: z.string().min(1).max(LIMITS.queryChars),
  limit: z.number().int().min(1).max(200).default(5),
  tags: z.array(z.string()).max(LIMITS.tagCount).optional(),
});

export type DocumentQuery = z.input<typeof DocumentQuerySchema>;

export interface DocumentChunkHit {
  documentId: string;
  title: string;
  chunk: DocumentChunk;
  score: number;
}

export interface CombinedKnowledge {
  /** Documents as `## title` sections, cut to the token limit. */
  text: string;
  tokenCount: number;
  /** Ids of documents included (the last one possibly cut). */
  documentIds: string[];
  /** True when something did not fit. */
  truncated: boolean;
}
