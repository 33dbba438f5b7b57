import { ValidationError } from '../../foundation/errors.js';
import type { MemoryFeature } from '../../runtime/feature.js';
import type { DetailStore } from '../../store/details/store.js';
import type { FactStore } from '../../store/facts/store.js';
import type { SessionStore } from '../../store/sessions/store.js';
import { type AllFactsOptions, allFacts } from './all/feature.js';
import { type FactRecallOptions, factRecall } from './recall/feature.js';
import { relevantMemory } from './relevant/feature.js';
import type { RelevantMemoryOptions } from './relevant/manager.js';

/**
 * How the fact feature puts the user's facts in the prompt:
 * - `all`: every fact, newest first, within the block's share (`[DYNAMIC_MEMORY]`), with the tools that
 *   create, update and delete facts (middleware `facts`);
 * - `recall`: the facts the user's message finds, each shown once per session, a few newest ones on a
 *   session's first turn when nothing matches, with save_memory / search_memory / delete_memory /
 *   list_memory_categories (middleware `fact-recall`);
 * - `relevant`: facts and offloaded details above a relevance threshold, and each exchange stored as an
 *   episodic fact after the turn (middleware `relevant-memory`, no tools).
 * Two modes may run side by side (e.g. `all` for a small profile and `recall` for the rest): a fact one
 * block showed is not shown again by a later one in the same turn.
 */
export type FactMode = 'all' | 'recall' | 'relevant';

/** Where the fact feature reads and writes; the builder hands these from its stores bundle. */
export interface FactFeatureStores {
  facts: FactStore;
  /** Needed by `recall` (the ids shown in each session are kept in its k-v map). */
  sessions?: SessionStore;
  /** `relevant` also searches offloaded details when given. */
  details?: DetailStore;
}

export type FactMemoryOptions = FactFeatureStores &
  (
    | ({ mode?: 'all' } & Omit<AllFactsOptions, 'store'>)
    | ({ mode: 'recall' } & Omit<FactRecallOptions, 'store' | 'sessions'>)
    | ({ mode: 'relevant' } & Omit<RelevantMemoryOptions, 'facts' | 'details'>)
  );

/** The user's facts in the prompt, in one of three modes (see `FactMode`). */
export function factMemory(options: FactMemoryOptions): MemoryFeature {
  const { facts, sessions, details, ...rest } = options;
  switch (rest.mode) {
    case 'recall': {
      const { mode: _, ...recall } = rest;
      if (!sessions) throw new ValidationError('Fact recall needs a session store (`sessions`).');
      return factRecall({ ...recall, store: facts, sessions });
    }
    case 'relevant': {
      const { mode: _, ...relevant } = rest;
      return relevantMemory({ ...relevant, facts, ...(details ? { details } : {}) });
    }
    default: {
      const { mode: _, ...all } = rest;
      return allFacts({ ...all, store: facts });
    }
  }
}
