import type { Clock, KiokuStores, Tokenizer } from '@kioku/core';
import {
  PartitionedDetailStore,
  PartitionedDocumentStore,
  PartitionedFactStore,
  PartitionedPlanStore,
  PartitionedSessionStore,
  PartitionedWorkingMemoryStore,
  RecordBackedPartitions,
  type SessionStoreOptions,
  storesOverBackend,
  type WorkingMemoryOptions,
} from '@kioku/core/adapter';
import { JsonFileBackend, type JsonFileBackendOptions } from './file-backend.js';

export interface JsonStoreOptions extends JsonFileBackendOptions {
  clock?: Clock;
}

/** The partition seam the single-kind stores run on: core's record partitions over the files. */
function partitions(options: JsonFileBackendOptions) {
  return new RecordBackedPartitions(new JsonFileBackend(options));
}

/** Facts as `users/{user}[/agents/{agent}]/facts.json`. */
export class JsonFactStore extends PartitionedFactStore {
  constructor(options: JsonStoreOptions) {
    super({ backend: partitions(options), clock: options.clock });
  }
}

/** Knowledge documents (a head, text parts and chunks each) as `.../documents.json`. */
export class JsonDocumentStore extends PartitionedDocumentStore {
  constructor(options: JsonStoreOptions & { tokenizer?: Tokenizer; chunkTokens?: number }) {
    super({ ...options, backend: partitions(options) });
  }
}

/** One plan per thread as `.../plans/{threadId}.json`. */
export class JsonPlanStore extends PartitionedPlanStore {
  constructor(options: JsonStoreOptions) {
    super({ backend: partitions(options), clock: options.clock });
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
    super({ ...options, backend: partitions(options) });
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
    super({ ...options, backend: partitions(options) });
  }
}

/** Details (offloaded tool outputs) as `users/{user}/details.json`. */
export class JsonDetailStore extends PartitionedDetailStore {
  constructor(options: JsonStoreOptions & { tokenizer?: Tokenizer }) {
    super({ ...options, backend: partitions(options) });
  }
}

/** All six stores over one data directory, sharing one backend (one cache, one set of locks). */
export function createJsonStores(
  options: JsonStoreOptions & {
    tokenizer?: Tokenizer;
    working?: WorkingMemoryOptions;
    sessions?: SessionStoreOptions;
  },
): KiokuStores & { backend: JsonFileBackend } {
  const backend = new JsonFileBackend(options);
  return {
    backend,
    // Files are created by the first write; there is no schema and nothing held open.
    ...storesOverBackend(backend, {
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
      ...(options.working ? { working: options.working } : {}),
      ...(options.sessions ? { sessions: options.sessions } : {}),
    }),
  };
}
