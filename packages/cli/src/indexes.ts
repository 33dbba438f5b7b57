import { NotFoundError, StorageError } from '@kioku/core';
import type { VectorIndex } from '@kioku/core/store';
import { importAdapter, LOADERS } from './adapters.js';
import { UsageError } from './errors.js';
import { parseUrl, redact } from './urls.js';

/** Where vectors live, parsed from `--index`: `qdrant:http://host:6333[?collection=<name>]`. */
export interface IndexSpec {
  type: 'qdrant';
  /** Qdrant's REST URL without Kioku's `?collection=`. */
  url: string;
  /** The collection (default: `@kioku/store-qdrant`'s, `kioku_vectors`). */
  collection: string | undefined;
  /** `qdrant:<url>` without the collection, password hidden. */
  label: string;
}

const INDEX_EXAMPLE = 'qdrant:http://localhost:6333 (add ?collection=<name> for another collection)';

/** Parse `--index`. Throws a UsageError naming the accepted form. */
export function parseIndex(input: string): IndexSpec {
  const trimmed = input.trim();
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s.exec(trimmed);
  const scheme = (match?.[1] ?? trimmed).toLowerCase();
  if (scheme === 'memory' || scheme === 'in-memory') {
    throw new UsageError(
      `An in-memory vector index is gone when the command exits, and the rebuilt vectors with it. Give the index your application uses, e.g. --index ${INDEX_EXAMPLE}.`,
    );
  }
  if (scheme === 'http' || scheme === 'https') {
    throw new UsageError(`Say which index is at "${input}": qdrant:${trimmed}.`);
  }
  if (!match || scheme !== 'qdrant') {
    throw new UsageError(
      `${match ? `Unknown vector index "${scheme}:" in "${input}"` : `"${input}" is not a vector index`}. Use ${INDEX_EXAMPLE}.`,
    );
  }
  const url = parseUrl(match[2]!);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`"${input}": write Qdrant's REST URL after qdrant:, e.g. ${INDEX_EXAMPLE}.`);
  }
  const collection = url.searchParams.get('collection') ?? undefined;
  if (collection !== undefined && !/^[A-Za-z0-9_-]{1,255}$/.test(collection)) {
    throw new UsageError(`?collection="${collection}": a collection name has only letters, digits, _ and -.`);
  }
  const unknown = [...url.searchParams.keys()].filter((key) => key !== 'collection');
  if (unknown.length > 0) {
    throw new UsageError(
      `Unknown parameter "${unknown[0]}" in "${input}"; qdrant: takes ?collection=<name>.`,
    );
  }
  url.searchParams.delete('collection');
  return { type: 'qdrant', url: url.toString(), collection, label: `qdrant:${redact(url)}` };
}

/** A vector index, opened (nothing is sent until a method is called). */
export interface OpenIndex {
  readonly spec: IndexSpec;
  readonly index: VectorIndex;
  /** The spec and the collection, for messages. */
  readonly label: string;
  /** For a rebuild: create the collection (and payload indexes) if missing; refuse another vector size. */
  setup(): Promise<void>;
  /**
   * For a check: the collection must exist (a mistyped name must not read as "no vectors") and hold
   * vectors of the embedder's size. On a collection Kioku created this reads only.
   */
  mustExist(): Promise<void>;
}

/** Open a vector index of `dimensions` (the embedder's). `QDRANT_API_KEY` from the environment is the key. */
export async function openIndex(spec: IndexSpec, dimensions: number): Promise<OpenIndex> {
  const { QdrantVectorIndex, QdrantClient } = await importAdapter('qdrant', LOADERS.qdrant);
  const url = new URL(spec.url);
  const prefix = url.pathname.replace(/\/+$/, '');
  const apiKey = process.env.QDRANT_API_KEY || undefined;
  const client = new QdrantClient({
    url: url.origin,
    ...(prefix === '' ? {} : { prefix }),
    ...(apiKey === undefined ? {} : { apiKey }),
    checkCompatibility: false,
  });
  const index = new QdrantVectorIndex({ client, collection: spec.collection, dimensions });
  const label = `${spec.label} (collection ${index.collection})`;
  return {
    spec,
    index,
    label,
    setup: () => index.setup(),
    mustExist: async () => {
      let exists: boolean;
      try {
        ({ exists } = await client.collectionExists(index.collection));
      } catch (error) {
        throw new StorageError(`Qdrant at ${spec.label} did not answer: ${(error as Error).message}`, {
          cause: error,
        });
      }
      if (!exists) {
        throw new NotFoundError(
          `No collection "${index.collection}" in ${spec.label}: check --index (?collection=<name>).`,
          { details: { collection: index.collection } },
        );
      }
      // The collection exists, so setup() only compares its vector size with the embedder's (and adds
      // the payload indexes models() needs, should another program have created the collection).
      await index.setup();
    },
  };
}
