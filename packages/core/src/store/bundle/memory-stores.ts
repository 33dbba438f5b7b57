import type { Clock } from '../../foundation/clock.js';
import type { Tokenizer } from '../../tokens/tokenizer.js';
import { InMemoryDetailStore } from '../details/memory.js';
import { InMemoryDocumentStore } from '../documents/memory.js';
import { InMemoryFactStore } from '../facts/memory.js';
import { InMemoryPlanStore } from '../plans/memory.js';
import { InMemorySessionStore } from '../sessions/memory.js';
import type { SessionStoreOptions } from '../sessions/partitioned.js';
import { InMemoryWorkingMemoryStore } from '../working/memory.js';
import type { WorkingMemoryOptions } from '../working/partitioned.js';
import type { KiokuStores } from './bundle.js';

export interface InMemoryStoresOptions {
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Chunk size of documents, in tokens (default 300). */
  chunkTokens?: number;
  working?: Omit<WorkingMemoryOptions, 'clock'>;
  sessions?: Omit<SessionStoreOptions, 'clock'>;
}

/** All six stores in process memory: tests, demos and single-process apps that keep nothing. */
export function createInMemoryStores(options: InMemoryStoresOptions = {}): KiokuStores {
  const { clock, tokenizer, chunkTokens } = options;
  const common = clock ? { clock } : {};
  return {
    facts: new InMemoryFactStore(common),
    documents: new InMemoryDocumentStore({
      ...common,
      ...(tokenizer ? { tokenizer } : {}),
      ...(chunkTokens ? { chunkTokens } : {}),
    }),
    plans: new InMemoryPlanStore(common),
    working: new InMemoryWorkingMemoryStore({ ...options.working, ...common }),
    sessions: new InMemorySessionStore({ ...options.sessions, ...common }),
    details: new InMemoryDetailStore({ ...common, ...(tokenizer ? { tokenizer } : {}) }),
    setup: async () => {},
    close: async () => {},
  };
}
