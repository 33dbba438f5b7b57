import path from 'node:path';
import { parseArgs } from 'node:util';
import { BACKENDS, type Backend, KINDS, type Kind } from './stack.js';
import { VECTOR_BACKENDS, type VectorBackend } from './vectors.js';

export interface DemoArgs {
  help: boolean;
  tour: boolean;
  resume: boolean;
  userId: string;
  dataDir: string;
  sandbox: string;
  backends: Record<Kind, Backend>;
  sqliteFile: string | undefined;
  postgresUrl: string | undefined;
  redisUrl: string | undefined;
  model: string | undefined;
  /** The model of background memory work (extraction, enrichment, the dream); default `model`. */
  memoryModel: string | undefined;
  /**
   * What runs each turn: core's `conversation.run`, the Vercel AI SDK with `@kioku/ai-sdk`, a LangGraph
   * `createReactAgent` with `@kioku/langgraph` or a Mastra `Agent` with `@kioku/mastra`.
   */
  framework: Framework;
  /** Sources learnt at start (`--knowledge`, repeatable). */
  knowledge: string[];
  embeddings: boolean;
  embeddingModel: string;
  embeddingDimensions: number | undefined;
  vectors: VectorBackend;
  qdrantUrl: string | undefined;
  qdrantApiKey: string | undefined;
  qdrantCollection: string | undefined;
}

export const FRAMEWORKS = ['kioku', 'ai-sdk', 'langgraph', 'mastra'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const USAGE = `Usage: pnpm demo [options]

  --user <id>          whose memory (default KIOKU_USER or "demo-user")
  --data-dir <dir>     JSON data folder (default KIOKU_DATA_DIR or ./.kioku-data)
  --sandbox <dir>      folder the file tools may read (default <data-dir>/sandbox)
  --store <backend>    backend for every memory kind: json | sqlite | postgres | redis, or a spec as the
                       kioku CLI takes it: sqlite:<file> | postgres://… | redis://… (KIOKU_STORE)
  --facts|--documents|--plans|--working|--sessions|--details <backend>
                       backend for one kind (KIOKU_STORE_FACTS, …)
  --sqlite-file <f>    (KIOKU_SQLITE_FILE, default <data-dir>/kioku.sqlite)
  --postgres-url <u>   (DATABASE_URL)      --redis-url <u>   (REDIS_URL)
  --model <name>       (OPENAI_MODEL)
  --memory-model <name>  a cheaper model for extraction and the dream (KIOKU_MEMORY_MODEL; default --model)
  --framework kioku|ai-sdk|langgraph|mastra
                       what runs each turn: core's loop, the Vercel AI SDK's streamText with @kioku/ai-sdk,
                       a LangGraph createReactAgent with @kioku/langgraph, or a Mastra Agent with
                       @kioku/mastra (KIOKU_FRAMEWORK, default kioku; the offline tour runs core's loop)
  --knowledge <src>    learn a document at start: a path in the sandbox or an http(s) URL (repeatable)
  --embeddings on|off  hybrid recall with the endpoint's embeddings (KIOKU_EMBEDDINGS, default on)
  --embedding-model <name>       (OPENAI_EMBEDDING_MODEL, default text-embedding-3-small)
  --embedding-dimensions <n>     vector size of a non-OpenAI model (OPENAI_EMBEDDING_DIMENSIONS)
  --vectors memory|qdrant|postgres  vector index (KIOKU_VECTORS, default memory: rebuilt at every start;
                       postgres: pgvector at --postgres-url / DATABASE_URL)
  --qdrant-url <u>     (QDRANT_URL; key: QDRANT_API_KEY)   --qdrant-collection <name> (QDRANT_COLLECTION)
  --resume             continue the user's latest session instead of starting one
  --tour               run the offline tour even when an endpoint is configured

Without OPENAI_API_KEY and OPENAI_BASE_URL the demo runs the offline tour (a scripted model).`;

export function parseDemoArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): DemoArgs {
  const kindOptions = Object.fromEntries(KINDS.map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean', short: 'h' },
      tour: { type: 'boolean' },
      resume: { type: 'boolean' },
      user: { type: 'string' },
      'data-dir': { type: 'string' },
      sandbox: { type: 'string' },
      store: { type: 'string' },
      'sqlite-file': { type: 'string' },
      'postgres-url': { type: 'string' },
      'redis-url': { type: 'string' },
      model: { type: 'string' },
      'memory-model': { type: 'string' },
      framework: { type: 'string' },
      knowledge: { type: 'string', multiple: true },
      embeddings: { type: 'string' },
      'embedding-model': { type: 'string' },
      'embedding-dimensions': { type: 'string' },
      vectors: { type: 'string' },
      'qdrant-url': { type: 'string' },
      'qdrant-collection': { type: 'string' },
      ...kindOptions,
    },
    strict: true,
  });
  const dataDir = path.resolve(str(values['data-dir']) ?? env.KIOKU_DATA_DIR ?? '.kioku-data');
  // A backend is a name (json, sqlite, postgres, redis) or, as the kioku CLI takes them, a spec that also
  // says where: sqlite:<file>, postgres://…, redis://… (one location per backend for the whole demo).
  const locations: { sqlite?: string; postgres?: string; redis?: string } = {};
  const backendOf = (value: string, flag: string): Backend => {
    const spec = parseStoreSpec(value, flag);
    if (spec.location !== undefined && spec.backend !== 'json') {
      const known = locations[spec.backend];
      if (known !== undefined && known !== spec.location) {
        throw new Error(
          `${flag}: a second ${spec.backend} location (${spec.location}); the demo uses one (${known}).`,
        );
      }
      locations[spec.backend] = spec.location;
    }
    return spec.backend;
  };
  const all = backendOf(str(values.store) ?? env.KIOKU_STORE ?? 'json', '--store');
  const backends = Object.fromEntries(
    KINDS.map((k) => [
      k,
      backendOf(
        str((values as Record<string, unknown>)[k]) ?? env[`KIOKU_STORE_${k.toUpperCase()}`] ?? all,
        `--${k}`,
      ),
    ]),
  ) as Record<Kind, Backend>;
  const dimensions = str(values['embedding-dimensions']) ?? env.OPENAI_EMBEDDING_DIMENSIONS;
  if (dimensions !== undefined && !/^[1-9]\d*$/.test(dimensions)) {
    throw new Error(`--embedding-dimensions: "${dimensions}" is not a positive integer.`);
  }
  return {
    help: values.help === true,
    tour: values.tour === true,
    resume: values.resume === true,
    userId: str(values.user) ?? env.KIOKU_USER ?? 'demo-user',
    dataDir,
    sandbox: path.resolve(str(values.sandbox) ?? path.join(dataDir, 'sandbox')),
    backends,
    sqliteFile: str(values['sqlite-file']) ?? locations.sqlite ?? env.KIOKU_SQLITE_FILE,
    postgresUrl: str(values['postgres-url']) ?? locations.postgres ?? env.DATABASE_URL,
    redisUrl: str(values['redis-url']) ?? locations.redis ?? env.REDIS_URL,
    model: str(values.model),
    memoryModel: str(values['memory-model']) ?? env.KIOKU_MEMORY_MODEL,
    framework: oneOf(FRAMEWORKS, str(values.framework) ?? env.KIOKU_FRAMEWORK ?? 'kioku', '--framework'),
    knowledge: (values.knowledge ?? []).filter((k) => k !== ''),
    embeddings:
      oneOf(['on', 'off'], str(values.embeddings) ?? env.KIOKU_EMBEDDINGS ?? 'on', '--embeddings') === 'on',
    embeddingModel: str(values['embedding-model']) ?? env.OPENAI_EMBEDDING_MODEL ?? 'text-embedding-3-small',
    embeddingDimensions: dimensions === undefined ? undefined : Number(dimensions),
    vectors: oneOf(VECTOR_BACKENDS, str(values.vectors) ?? env.KIOKU_VECTORS ?? 'memory', '--vectors'),
    qdrantUrl: str(values['qdrant-url']) ?? env.QDRANT_URL,
    qdrantApiKey: env.QDRANT_API_KEY,
    qdrantCollection: str(values['qdrant-collection']) ?? env.QDRANT_COLLECTION,
  };
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `json`, `sqlite`, `postgres`, `redis`, or a spec with a location: `sqlite:<file>`, `postgres://…`, `redis://…`. */
export function parseStoreSpec(value: string, flag: string): { backend: Backend; location?: string } {
  if (/^postgres(ql)?:\/\//.test(value)) return { backend: 'postgres', location: value };
  if (/^rediss?:\/\//.test(value)) return { backend: 'redis', location: value };
  if (value.startsWith('sqlite:')) return { backend: 'sqlite', location: value.slice('sqlite:'.length) };
  if (value.startsWith('json:')) {
    throw new Error(`${flag}: use --data-dir <dir> for the JSON folder ("${value}" names one).`);
  }
  return { backend: oneOf(BACKENDS, value, flag) };
}

function oneOf<T extends string>(allowed: readonly T[], value: string, flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new Error(`${flag}: unknown value "${value}" (use ${allowed.join(', ')}).`);
  }
  return value as T;
}
