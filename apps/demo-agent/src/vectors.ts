import { type Embedder, EmbeddingModelMismatchError, isKiokuError, withEmbeddings } from '@kioku/core';
import { InMemoryVectorIndex, reembed, type VectorIndex } from '@kioku/core/store';
import type { DemoStores } from './stack.js';

export const VECTOR_BACKENDS = ['memory', 'qdrant', 'postgres'] as const;
export type VectorBackend = (typeof VECTOR_BACKENDS)[number];

/** The embedder and the index every hybrid store of the demo shares. */
export interface Vectors {
  embedder: Embedder;
  index: VectorIndex;
  backend: VectorBackend;
  /** Release the index's connections (PostgreSQL's pool); the others hold none. */
  close?: () => Promise<void>;
}

export interface VectorConfig {
  backend: VectorBackend;
  qdrantUrl?: string;
  qdrantApiKey?: string;
  qdrantCollection?: string;
  postgresUrl?: string;
}

/**
 * The vector index: core's in-memory one (empty at every start: the caller rebuilds it with
 * `rebuildVectors`), or Qdrant or PostgreSQL with pgvector, imported only when chosen, whose vectors
 * outlive the process.
 */
export async function openVectors(embedder: Embedder, config: VectorConfig): Promise<Vectors> {
  if (config.backend === 'memory') {
    return {
      embedder,
      index: new InMemoryVectorIndex({ dimensions: embedder.dimensions }),
      backend: 'memory',
    };
  }
  if (config.backend === 'postgres') return openPostgresVectors(embedder, config.postgresUrl);
  if (!config.qdrantUrl) throw new Error('--vectors qdrant needs QDRANT_URL (or --qdrant-url).');
  const { QdrantVectorIndex } = await import('@kioku/store-qdrant');
  const index = new QdrantVectorIndex({
    url: config.qdrantUrl,
    dimensions: embedder.dimensions,
    ...(config.qdrantApiKey ? { apiKey: config.qdrantApiKey } : {}),
    ...(config.qdrantCollection ? { collection: config.qdrantCollection } : {}),
  });
  try {
    await index.setup();
  } catch (error) {
    // The collection was made for a model of another size: its vectors cannot be mixed with these.
    if (isKiokuError(error) && error.code === 'VALIDATION') {
      throw new Error(
        `${error.message} Pick another collection for "${embedder.modelId}" (--qdrant-collection <name>), then /reembed.`,
        { cause: error },
      );
    }
    throw error;
  }
  return { embedder, index, backend: 'qdrant' };
}

/** `@kioku/store-postgres`'s pgvector index, table `kioku.vectors`; setup() says when pgvector is missing. */
async function openPostgresVectors(embedder: Embedder, url: string | undefined): Promise<Vectors> {
  if (!url)
    throw new Error('--vectors postgres needs DATABASE_URL (or --postgres-url, or --store postgres://…).');
  const { PostgresVectorIndex } = await import('@kioku/store-postgres');
  const index = new PostgresVectorIndex({ url, dimensions: embedder.dimensions });
  try {
    await index.setup();
  } catch (error) {
    await index.close();
    // The table was made for a model of another size: its vectors cannot be mixed with these.
    if (isKiokuError(error) && error.code === 'VALIDATION') {
      throw new Error(
        `${error.message} Drop table kioku.vectors (its vectors are rebuilt with /reembed) or use a model of that size.`,
        { cause: error },
      );
    }
    throw error;
  }
  return { embedder, index, backend: 'postgres', close: () => index.close() };
}

/** Facts, documents and details with hybrid search (lexical + vectors, fused by rank); no vectors: as is. */
export function withVectors(stores: DemoStores, vectors: Vectors | undefined): DemoStores {
  return vectors ? withEmbeddings(stores, { embedder: vectors.embedder, index: vectors.index }) : stores;
}

const EMBEDDED_KINDS = ['facts', 'documents', 'details'] as const;

/**
 * Core's `reembed()` for the user's facts, documents and details: every vector of theirs is replaced by
 * one of the configured model. The in-memory index needs it at every start; after a model change it is
 * the answer to an EmbeddingModelMismatchError.
 */
export async function rebuildVectors(stores: DemoStores, vectors: Vectors, userId: string): Promise<string> {
  const counts: string[] = [];
  for (const kind of EMBEDDED_KINDS) {
    const report = await reembed({
      store: stores[kind],
      index: vectors.index,
      embedder: vectors.embedder,
      userId,
    });
    counts.push(`${kind} ${report.records}`);
  }
  return `Vectors rebuilt with ${vectors.embedder.modelId}: ${counts.join(', ')}.`;
}

/** One line for the chat's header. */
export function describeVectors(vectors: Vectors | undefined): string {
  if (!vectors) return 'Embeddings off: recall and knowledge search are lexical.';
  const where = {
    memory: 'in-memory index (rebuilt at start)',
    qdrant: 'Qdrant',
    postgres: 'PostgreSQL (pgvector)',
  }[vectors.backend];
  return `Embeddings: ${vectors.embedder.modelId} (${vectors.embedder.dimensions} dimensions), ${where}; hybrid recall.`;
}

/** What to do when the stored vectors were made by another model. */
export function mismatchAdvice(error: unknown): string | undefined {
  if (!(error instanceof EmbeddingModelMismatchError)) return undefined;
  return (
    "Type /reembed to rebuild your vectors with the configured model (core's reembed(); for every user " +
    'of a Qdrant collection, `kioku reembed`), or go back to the model that wrote them with --embedding-model.'
  );
}
