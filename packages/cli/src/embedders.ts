import { type Embedder, HashingEmbedder, isKiokuError } from '@kioku/core';
import { importAdapter, LOADERS } from './adapters.js';
import { UsageError } from './errors.js';

/** The embedding model, parsed from `--embedder` (and `--dimensions`). */
export type EmbedderSpec =
  | { type: 'hashing'; dimensions: number | undefined }
  | { type: 'openai'; model: string; dimensions: number | undefined };

const EMBEDDER_EXAMPLES =
  'openai:text-embedding-3-small, openai:<model> --dimensions <n>, hashing or hashing:256';

/** A vector size (`what` names where it was written, for the message). */
function parseDimensions(value: string, what: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 16_384) {
    throw new UsageError(`${what}: "${value}" is not a vector size; give an integer from 1 to 16384.`);
  }
  return n;
}

/** Parse `--embedder` and `--dimensions`. Throws a UsageError naming the accepted forms. */
export function parseEmbedder(input: string, dimensionsOption?: string): EmbedderSpec {
  const trimmed = input.trim();
  const colon = trimmed.indexOf(':');
  const scheme = (colon === -1 ? trimmed : trimmed.slice(0, colon)).toLowerCase();
  const rest = colon === -1 ? undefined : trimmed.slice(colon + 1);
  const option =
    dimensionsOption === undefined ? undefined : parseDimensions(dimensionsOption, '--dimensions');
  switch (scheme) {
    case 'hashing': {
      const own =
        rest === undefined || rest === '' ? undefined : parseDimensions(rest, `--embedder ${input}`);
      if (own !== undefined && option !== undefined && own !== option) {
        throw new UsageError(`${input} and --dimensions ${option} disagree; give the size once.`);
      }
      const dimensions = own ?? option;
      if (dimensions !== undefined && dimensions < 2) {
        throw new UsageError('The hashing embedder needs at least 2 dimensions.');
      }
      return { type: 'hashing', dimensions };
    }
    case 'openai': {
      const model = rest?.trim() ?? '';
      if (model === '') {
        throw new UsageError(
          `Name the model: --embedder openai:<model>, e.g. openai:text-embedding-3-small (the model id is stored with every vector).`,
        );
      }
      return { type: 'openai', model, dimensions: option };
    }
    default:
      throw new UsageError(`Unknown embedder "${input}". Use one of: ${EMBEDDER_EXAMPLES}.`);
  }
}

/**
 * Build the embedder. `openai:` goes through `@kioku/openai` (`OPENAI_API_KEY`, `OPENAI_BASE_URL` from
 * the environment); nothing is sent until texts are embedded.
 */
export async function loadEmbedder(spec: EmbedderSpec): Promise<Embedder> {
  if (spec.type === 'hashing') {
    return new HashingEmbedder(spec.dimensions === undefined ? {} : { dimensions: spec.dimensions });
  }
  const { OpenAIEmbedder } = await importAdapter('openai', LOADERS.openai);
  requireOpenAIEndpoint('openai:');
  try {
    return new OpenAIEmbedder({
      model: spec.model,
      ...(spec.dimensions === undefined ? {} : { dimensions: spec.dimensions }),
    });
  } catch (error) {
    // The one thing the constructor refuses (we pass no batch size): a model whose size it does not know.
    if (isKiokuError(error) && error.code === 'VALIDATION' && spec.dimensions === undefined) {
      throw new UsageError(
        `The vector size of "${spec.model}" is not known; give it with --dimensions <n> (the length of the vectors the model returns).`,
      );
    }
    throw error;
  }
}

/** A UsageError unless the environment names an OpenAI-compatible endpoint (`what` says who needs it). */
export function requireOpenAIEndpoint(what: string): void {
  if (!process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL) {
    throw new UsageError(
      `${what} needs OPENAI_API_KEY in the environment (or OPENAI_BASE_URL for an OpenAI-compatible server that takes no key: Ollama, vLLM, LM Studio).`,
    );
  }
}
