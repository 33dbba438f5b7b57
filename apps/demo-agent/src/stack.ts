import { openStores as openSpecs, type StoresSpec } from '@kioku/cli';
import {
  type BackgroundEvent,
  type ChatModel,
  type Clock,
  type Kioku,
  KiokuBuilder,
  type KiokuStores,
  STORE_KINDS,
} from '@kioku/core';
import { sandboxToolkit } from './sandbox.js';

export const KINDS = STORE_KINDS;
export type Kind = (typeof KINDS)[number];
export const BACKENDS = ['json', 'sqlite', 'postgres', 'redis'] as const;
export type Backend = (typeof BACKENDS)[number];

/** The demo's stores: one bundle, as every `create*Stores` returns it. */
export type DemoStores = KiokuStores;

export interface StoreConfig {
  dataDir: string;
  backends: Record<Kind, Backend>;
  clock?: Clock;
  /** SQLite file (default `<dataDir>/kioku.sqlite`). */
  sqliteFile?: string;
  postgresUrl?: string;
  redisUrl?: string;
}

/** The backend spec (as the kioku CLI takes it) for a backend name of the demo's configuration. */
function specOf(backend: Backend, config: StoreConfig): string {
  switch (backend) {
    case 'json':
      return `json:${config.dataDir}`;
    case 'sqlite':
      return `sqlite:${config.sqliteFile ?? `${config.dataDir}/kioku.sqlite`}`;
    case 'postgres':
      if (!config.postgresUrl)
        throw new Error('The postgres backend needs DATABASE_URL (or --postgres-url).');
      return config.postgresUrl;
    case 'redis':
      return config.redisUrl ?? 'redis://127.0.0.1:6379';
  }
}

/**
 * Opens each backend the configuration names — through the same `openStores` the kioku CLI uses, so
 * the demo keeps no backend switch of its own — sets it up, and picks each memory kind from its backend.
 */
export async function openStores(
  config: StoreConfig,
): Promise<{ stores: DemoStores; close(): Promise<void> }> {
  const spec: StoresSpec = Object.fromEntries(
    KINDS.map((kind) => [kind, specOf(config.backends[kind], config)]),
  );
  const stores = await openSpecs(spec, config.clock ? { clock: config.clock } : {});
  return { stores, close: () => stores.close() };
}

export const SYSTEM_PROMPT =
  'You are Kioku demo agent, a helpful assistant with memory. Save durable facts about the user with ' +
  'create_memory, plan multi-step work with create_plan / update_plan_step, keep short-lived notes in ' +
  'working memory, and read files with read_file / list_directory (paths are relative to the sandbox). ' +
  'Large tool outputs come back as [MemoryRef: …]; call retrieve_memory with its id to read them. ' +
  'Passages of documents the user taught you appear between [STATIC_KNOWLEDGE] markers: answer from them.';

/** What `buildKioku` wires besides the stores. */
export interface BuildOptions {
  sandbox: string;
  clock?: Clock;
  /**
   * The model of background memory work: extraction after every turn, save_memory's enrichment, the
   * dream. Without one (the offline tour) the memory grows only through the model's tool calls.
   */
  memoryModel?: ChatModel;
  /** What background work did after a turn (facts extracted, a saved memory expanded, a failure). */
  onBackground?: (event: BackgroundEvent) => void;
}

/**
 * Every memory feature, in the order their blocks appear in the prompt, plus the sandbox tools. Pass the
 * stores through `withEmbeddings` first for hybrid recall: every feature then searches through them.
 *
 * Knowledge is `indexed`: in a chat the knowledge grows with every /learn, and full text would resend
 * every document each turn and cut the later ones at the budget; chunks chosen by the user message cost
 * only what the question needs. Three chunks (about 900 tokens) at most: lexical search expands the
 * query from its best hits, so past the first few the chunks are only loosely related.
 */
export function buildKioku(stores: DemoStores, options: BuildOptions): Kioku {
  const clock = options.clock ? { clock: options.clock } : {};
  const builder = new KiokuBuilder({
    stores,
    systemPrompt: SYSTEM_PROMPT,
    // The intent step decides per turn whether recall searches memory; /ledger shows the decision.
    recall: 'auto',
    ...clock,
    ...(options.memoryModel ? { model: options.memoryModel } : {}),
    ...(options.onBackground ? { background: { onEvent: options.onBackground } } : {}),
  })
    .withFacts()
    .withKnowledge({ strategy: 'indexed', topK: 3 })
    .withPlanMode()
    .withMemory({ working: { ...clock } })
    .withToolOutputOffload({ thresholdTokens: 400 })
    .withFeedback()
    .use({ name: 'sandbox', toolkit: sandboxToolkit(options.sandbox) });
  return (options.memoryModel ? builder.withExtraction() : builder).build();
}
