import type { Clock } from '../foundation/clock.js';
import { parseScope, type Scope } from '../foundation/scope.js';
import {
  confirmQuarantined,
  dropQuarantined,
  listQuarantined,
  requarantine,
} from '../memory/trust/quarantine.js';
import type { Fact } from '../store/facts/record.js';
import type { FactStore } from '../store/facts/store.js';
import { nowIso } from './options.js';

/**
 * The user's review of quarantined memories: facts a tool, a document or a model pass wrote whose text
 * reads like instructions, left out of every prompt until the user confirms them.
 */
export class QuarantineReview {
  readonly #facts: FactStore;
  readonly #clock: Clock | undefined;

  constructor(facts: FactStore, clock: Clock | undefined) {
    this.#facts = facts;
    this.#clock = clock;
  }

  /** The quarantined memories, oldest first; `provenance.quarantine` says which detector rules fired on what. */
  list(scope: Omit<Scope, 'threadId'>): Promise<Fact[]> {
    return listQuarantined(this.#facts, parseScope(scope));
  }

  /**
   * Confirm a quarantined memory: it is recalled like any other from now on. The mark moves to
   * `provenance.confirmed`; `requarantine` undoes this. VALIDATION when the fact is not quarantined.
   */
  confirm(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return confirmQuarantined(this.#facts, parseScope(scope), id, nowIso(this.#clock));
  }

  /** Put a confirmed memory back in quarantine (undo `confirm`). */
  requarantine(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return requarantine(this.#facts, parseScope(scope), id);
  }

  /** Delete a quarantined memory; returns what was deleted. VALIDATION when the fact is not quarantined. */
  drop(scope: Omit<Scope, 'threadId'>, id: string): Promise<Fact> {
    return dropQuarantined(this.#facts, parseScope(scope), id);
  }
}
