import type {
  Clock,
  DetailStore,
  DocumentStore,
  FactStore,
  Kioku,
  PlanStore,
  SessionStore,
  WorkingMemoryStore,
} from '@kioku/core';
import { KiokuBuilder } from '@kioku/core';
import { sandboxToolkit } from './sandbox.js';

export const KINDS = ['facts', 'documents', 'plans', 'working', 'sessions', 'details'] as const;
export type Kind = (typeof KINDS)[number];
export const BACKENDS = ['json', 'sqlite', 'postgres', 'redis'] as const;
export type Backend = (typeof BACKENDS)[number];

export interface DemoStores {
  facts: FactStore;
  documents: DocumentStore;
  plans: PlanStore;
  working: WorkingMemoryStore;
  sessions: SessionStore;
  details: DetailStore;
}

export interface StoreConfig {
  dataDir: string;
  backends: Record<Kind, Backend>;
  clock?: Clock;
  /** SQLite file (default `<dataDir>/kioku.sqlite`). */
  sqliteFile?: string;
  postgresUrl?: string;
  redisUrl?: string;
}

type AnyStores = DemoStores & { close(): Promise<void> | void };

/**
 * Opens each backend the configuration names (drivers are imported only when used), runs its
 * `setup()`, and picks each memory kind from its backend.
 */
export async function openStores(
  config: StoreConfig,
): Promise<{ stores: DemoStores; close(): Promise<void> }> {
  const opened = new Map<Backend, AnyStores>();
  const clock = config.clock ? { clock: config.clock } : {};
  for (const backend of new Set(Object.values(config.backends))) {
    opened.set(backend, await openBackend(backend, config, clock));
  }
  const pick = <K extends Kind>(kind: K): DemoStores[K] => opened.get(config.backends[kind])![kind];
  return {
    stores: {
      facts: pick('facts'),
      documents: pick('documents'),
      plans: pick('plans'),
      working: pick('working'),
      sessions: pick('sessions'),
      details: pick('details'),
    },
    close: async () => {
      for (const stores of opened.values()) await stores.close();
    },
  };
}

async function openBackend(
  backend: Backend,
  config: StoreConfig,
  clock: { clock?: Clock },
): Promise<AnyStores> {
  switch (backend) {
    case 'json': {
      const { createJsonStores } = await import('@kioku/store-json');
      const stores = createJsonStores({ directory: config.dataDir, ...clock });
      return Object.assign(stores, { close: () => {} });
    }
    case 'sqlite': {
      const { createSqliteStores } = await import('@kioku/store-sqlite');
      const stores = createSqliteStores({
        file: config.sqliteFile ?? `${config.dataDir}/kioku.sqlite`,
        ...clock,
      });
      await stores.setup();
      return stores;
    }
    case 'postgres': {
      const { createPostgresStores } = await import('@kioku/store-postgres');
      const url = config.postgresUrl;
      if (!url) throw new Error('The postgres backend needs DATABASE_URL (or --postgres-url).');
      const stores = createPostgresStores({ url, ...clock });
      await stores.setup();
      return stores;
    }
    case 'redis': {
      const { createRedisStores } = await import('@kioku/store-redis');
      const stores = createRedisStores({ url: config.redisUrl ?? 'redis://127.0.0.1:6379', ...clock });
      return stores;
    }
  }
}

export const SYSTEM_PROMPT =
  'You are Kioku demo agent, a helpful assistant with memory. Save durable facts about the user with ' +
  'create_memory, plan multi-step work with create_plan / update_plan_step, keep short-lived notes in ' +
  'working memory, and read files with read_file / list_directory (paths are relative to the sandbox). ' +
  'Large tool outputs come back as [MemoryRef: …]; call retrieve_memory with its id to read them. ' +
  'Passages of documents the user taught you appear between [STATIC_KNOWLEDGE] markers: answer from them.';

/**
 * Every memory feature, in the order their blocks appear in the prompt, plus the sandbox tools. Pass the
 * stores through `withEmbeddings` first for hybrid recall: every feature then searches through them.
 *
 * Static memory is `indexed`: in a chat the knowledge grows with every /learn, and full text would resend
 * every document each turn and cut the later ones at the budget; chunks chosen by the user message cost
 * only what the question needs. Three chunks (about 900 tokens) at most: lexical search expands the
 * query from its best hits, so past the first few the chunks are only loosely related.
 */
export function buildKioku(stores: DemoStores, options: { sandbox: string; clock?: Clock }): Kioku {
  const clock = options.clock ? { clock: options.clock } : {};
  return new KiokuBuilder({ sessions: stores.sessions, systemPrompt: SYSTEM_PROMPT, ...clock })
    .withDynamicMemory({ store: stores.facts })
    .withStaticMemory({ store: stores.documents, strategy: 'indexed', topK: 3 })
    .withPlanMode({ store: stores.plans })
    .withMemory({ facts: stores.facts, working: stores.working, workingOptions: { ...clock } })
    .withToolOutputOffload({ details: stores.details, thresholdTokens: 400 })
    .use({ name: 'sandbox', toolkit: sandboxToolkit(options.sandbox) })
    .build();
}
