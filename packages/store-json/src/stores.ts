import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import {
  PartitionedDetailStore,
  PartitionedDocumentStore,
  PartitionedFactStore,
  PartitionedPlanStore,
  PartitionedSessionStore,
  PartitionedWorkingMemoryStore,
  type SessionStoreOptions,
  type WorkingMemoryOptions,
} from '@kioku/core/adapter';
import { JsonFileBackend, type JsonFileBackendOptions } from './file-backend.js';

export interface JsonStoreOptions extends JsonFileBackendOptions {
  clock?: Clock;
}

/** Facts as `users/{user}[/agents/{agent}]/facts.json`. */
export class JsonFactStore extends PartitionedFactStore {
  constructor(options: JsonStoreOptions) {
    super({ backend: new JsonFileBackend(options), clock: options.clock });
  }
}

/** Knowledge documents (text and chunks) as `.../documents.json`. */
export class JsonDocumentStore extends PartitionedDocumentStore {
  constructor(options: JsonStoreOptions & { tokenizer?: Tokenizer; chunkTokens?: number }) {
    super({ ...options, backend: new JsonFileBackend(options) });
  }
}

/** One plan per thread as `.../plans/{threadId}.json`. */
export class JsonPlanStore extends PartitionedPlanStore {
  constructor(options: JsonStoreOptions) {
    super({ backend: new JsonFileBackend(options), clock: options.clock });
  }
}

/**
 * Working memory grouped by key root as `.../working/session.json`, `patrol.json`, `subagent.json`
 * Expired entries are dropped on load and on every write; with `sweepIntervalMs`
 * a timer also sweeps all files (call `close()` to stop it).
 */
export class JsonWorkingMemoryStore extends PartitionedWorkingMemoryStore {
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(options: JsonStoreOptions & WorkingMemoryOptions & { sweepIntervalMs?: number }) {
    super({ ...options, backend: new JsonFileBackend(options) });
    if (options.sweepIntervalMs) {
      this.#timer = setInterval(() => void this.sweep().catch(() => {}), options.sweepIntervalMs);
      this.#timer.unref();
    }
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}

/** Sessions: `.../sessions/index.json` (the session list) and `.../sessions/{uuid}.json` (k-v + transcript). */
export class JsonSessionStore extends PartitionedSessionStore {
  constructor(options: JsonStoreOptions & SessionStoreOptions) {
    super({ ...options, backend: new JsonFileBackend(options) });
  }
}

/** Details (offloaded tool outputs) as `users/{user}/details.json`. */
export class JsonDetailStore extends PartitionedDetailStore {
  constructor(options: JsonStoreOptions & { tokenizer?: Tokenizer }) {
    super({ ...options, backend: new JsonFileBackend(options) });
  }
}

/** All six stores over one data directory, sharing one backend (one cache, one set of locks). */
export function createJsonStores(
  options: JsonStoreOptions & {
    tokenizer?: Tokenizer;
    working?: WorkingMemoryOptions;
    sessions?: SessionStoreOptions;
  },
) {
  const backend = new JsonFileBackend(options);
  const common = { backend, clock: options.clock };
  return {
    backend,
    facts: new PartitionedFactStore(common),
    documents: new PartitionedDocumentStore({ ...common, tokenizer: options.tokenizer }),
    plans: new PartitionedPlanStore(common),
    working: new PartitionedWorkingMemoryStore({ ...options.working, ...common }),
    sessions: new PartitionedSessionStore({ ...options.sessions, ...common }),
    details: new PartitionedDetailStore({ ...common, tokenizer: options.tokenizer }),
    // Files are created by the first write; there is no schema and nothing held open.
    setup: async () => {},
    close: async () => {},
  } satisfies KiokuStores & { backend: unknown };
}
