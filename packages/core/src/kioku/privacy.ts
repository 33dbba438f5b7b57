import type { Clock } from '../foundation/clock.js';
import type { Scope } from '../foundation/scope.js';
import type { CascadeResult } from '../memory/forget/cascade.js';
import { forgetFact, forgetSession } from '../memory/forget/cascade.js';
import { type ForgetUserOptions, forgetUser } from '../memory/forget/forget-user.js';
import type { ErasureReceipt } from '../memory/forget/receipt.js';
import { type ErasureCheck, verifyErased } from '../memory/forget/verify.js';
import { SuppressionList } from '../memory/trust/suppression.js';
import type { KiokuStores } from '../store/bundle/bundle.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { observeForget } from './forget-telemetry.js';

/** Forgetting: a user, one session or one fact, with what derives from them; and the check that nothing is left. */
export class Privacy {
  readonly #stores: KiokuStores;
  readonly #clock: Clock | undefined;
  readonly #beforeForget: () => Promise<void>;
  readonly #telemetry: Telemetry | undefined;

  /** `beforeForget` runs first in `forgetUser` (the facade waits for the background queue there). */
  constructor(
    stores: KiokuStores,
    options: {
      clock?: Clock | undefined;
      beforeForget: () => Promise<void>;
      telemetry?: Telemetry | undefined;
    },
  ) {
    this.#stores = stores;
    this.#clock = options.clock;
    this.#beforeForget = options.beforeForget;
    this.#telemetry = options.telemetry;
  }

  /**
   * Erase every record of `userId` from every store and the vector index (every agent, Kioku's own
   * sessions too) and return the erasure receipt. Background work queued so far runs first, so it cannot
   * write for the user afterwards.
   */
  async forgetUser(userId: string, options: Omit<ForgetUserOptions, 'clock'> = {}): Promise<ErasureReceipt> {
    await this.#beforeForget();
    const clock = this.#clock;
    return observeForget(this.#telemetry, 'user', { userId }, () =>
      forgetUser(this.#stores, userId, { ...options, ...(clock ? { clock } : {}) }),
    );
  }

  /** Scan every kind and the vector index: `{ erased: true }`, or what is left of `userId`. */
  verifyErased(userId: string): Promise<ErasureCheck> {
    return verifyErased(this.#stores, userId);
  }

  /**
   * Forget one fact, its vector and the facts derived from it through provenance; their text leaves the
   * kept changesets (tombstones) and goes on the user's suppression list, so extraction does not learn it
   * again (`suppressions`).
   */
  forgetFact(scope: Omit<Scope, 'threadId'>, factId: string): Promise<CascadeResult> {
    const clock = this.#clock;
    return observeForget(this.#telemetry, 'fact', scope, () =>
      forgetFact(this.#stores, scope, factId, clock ? { clock } : {}),
    );
  }

  /** What the user asked to forget (keyed hashes, no text): list it, or revoke an entry. */
  get suppressions(): SuppressionList {
    return new SuppressionList(this.#stores.sessions);
  }

  /** Forget one session with its transcript, k-v map, plan, offloaded details and the facts extracted from it. */
  forgetSession(scope: Omit<Scope, 'threadId'>, sessionId: string): Promise<CascadeResult> {
    return observeForget(this.#telemetry, 'session', scope, () =>
      forgetSession(this.#stores, scope, sessionId),
    );
  }
}
