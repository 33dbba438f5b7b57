import type { Scope } from '../foundation/scope.js';
import type { EnrichmentOutbox } from '../memory/enrichment/outbox.js';
import type { DrainOptions, ExtractionOutbox, SessionDrain, UserDrain } from '../memory/extraction/outbox.js';
import { PendingIndex } from '../memory/extraction/pending-index.js';
import type { PendingDrainer } from '../memory/extraction/run-pending.js';
import { baseScope } from '../store/sessions/own-session.js';
import type { SessionStore } from '../store/sessions/store.js';

/**
 * Every outbox a Kioku drains, behind the one pending index: save_memory's enrichment requests first
 * (they are the user's own words, waiting since the turn), then extraction's turns, within one pass budget.
 */
export class PendingWork implements PendingDrainer {
  readonly index: PendingIndex;
  readonly #extraction: ExtractionOutbox | undefined;
  readonly #enrichment: EnrichmentOutbox | undefined;

  constructor(
    sessions: SessionStore,
    outboxes: { extraction?: ExtractionOutbox | undefined; enrichment?: EnrichmentOutbox | undefined },
  ) {
    this.index = new PendingIndex(sessions);
    this.#extraction = outboxes.extraction;
    this.#enrichment = outboxes.enrichment;
  }

  async drainUser(scope: Scope, options: DrainOptions & { allSessions?: boolean } = {}): Promise<UserDrain> {
    const sessions: SessionDrain[] = [];
    let passes = 0;
    for (const drain of (await this.#enrichment?.drainUser(scope, options))?.sessions ?? []) {
      sessions.push(drain);
      passes += drain.passes + drain.failed;
    }
    const maxPasses = (options.maxPasses ?? Number.POSITIVE_INFINITY) - passes;
    if (this.#extraction && maxPasses > 0) {
      sessions.push(...(await this.#extraction.drainUser(scope, { ...options, maxPasses })).sessions);
    }
    return { scope: baseScope(scope), sessions };
  }
}
