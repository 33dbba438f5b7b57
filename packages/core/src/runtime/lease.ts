import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../foundation/clock.js';
import { ConflictError, isKiokuError } from '../foundation/errors.js';
import { shortId } from '../foundation/ids.js';
import type { Scope } from '../foundation/scope.js';
import { parseOrThrow } from '../foundation/validation.js';
import { MAX_TTL_MS, type WorkingEntry } from '../store/working/record.js';
import { RESERVED_KEY_ROOT } from '../store/working/reserved.js';
import type { WorkingMemoryStore } from '../store/working/store.js';

/*
 * A per-user lease on working memory, so that background work (extraction, the dream) started by several
 * app instances over one backend runs in one of them at a time. The lease is a working-memory entry with
 * a TTL: taken with `expectedVersion: 0` (only if nobody holds it), renewed and released with the version
 * its holder wrote last, so the backend's atomic compare-and-set decides every race.
 *
 * A version alone cannot tell two holders apart (a key set again after it expired starts over at version
 * 1), so renew and release also check that the entry still holds this holder's value, and a holder never
 * renews or releases past its own expiry by its clock. This assumes a store round trip takes much less
 * time than the TTL, and that the instances' clocks roughly agree, as every lease does.
 */

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}$/;

const LeaseOptionsSchema = z.object({
  ttlMs: z.number().int().min(1).max(MAX_TTL_MS),
  holder: z.string().min(1).max(200).optional(),
  renewEveryMs: z.number().int().min(1).optional(),
});

const LeaseValueSchema = z.object({ holder: z.string(), acquiredAt: z.string() });

export interface LeaseOptions {
  /** How long the lease lives unless renewed, in ms (at most 30 days, like every working-memory TTL). */
  ttlMs: number;
  /** Who holds it, for logs and the busy answer (default a random id). Every acquirer needs its own. */
  holder?: string;
  /** The clock the working-memory store decides expiry by (default the system clock). */
  clock?: Clock;
}

/** A lease as anyone can read it. */
export interface LeaseInfo {
  readonly name: string;
  /** Undefined when the entry does not hold a lease's value. */
  readonly holder: string | undefined;
  readonly acquiredAt: string | undefined;
  readonly expiresAt: string;
  readonly version: number;
}

/** A lease this process acquired. */
export interface Lease extends LeaseInfo {
  readonly holder: string;
  readonly acquiredAt: string;
  /** False once it was released, or found lost (expired, or taken by another holder). */
  readonly held: boolean;
  /** Extend it by its TTL from now. False when it was lost (nothing written then). */
  renew(): Promise<boolean>;
  /** Give it up. False when it was already lost: another holder's lease is never deleted. */
  release(): Promise<boolean>;
}

/** The working-memory key of the lease `name`: a namespace of its own, so no namespace cap ever evicts it. */
export function leaseKey(name: string): string {
  parseOrThrow(z.string().regex(NAME, 'must be one key segment such as "dream"'), name, 'lease name');
  return `${RESERVED_KEY_ROOT}/${name}/lease`;
}

/**
 * Take the lease `name` in the scope's user (+ agent) partition of working memory, or null when someone
 * else holds it. Expired leases count as free.
 */
export async function acquireLease(
  working: WorkingMemoryStore,
  scope: Scope,
  name: string,
  options: LeaseOptions,
): Promise<Lease | null> {
  const key = leaseKey(name);
  const { ttlMs, holder = `kioku-${shortId()}` } = parseOrThrow(
    LeaseOptionsSchema,
    { ttlMs: options.ttlMs, holder: options.holder },
    'lease options',
  );
  const clock = options.clock ?? systemClock;
  const value = JSON.stringify({ holder, acquiredAt: isoAt(clock) });
  try {
    const entry = await working.set(scope, key, value, { ttlMs, expectedVersion: 0 });
    return new HeldLease(working, scope, name, entry, { ttlMs, clock });
  } catch (error) {
    if (isKiokuError(error, 'CONFLICT')) return null;
    throw error;
  }
}

/** The lease `name` as it stands, or null when nobody holds it. */
export async function readLease(
  working: WorkingMemoryStore,
  scope: Scope,
  name: string,
): Promise<LeaseInfo | null> {
  const entry = await working.get(scope, leaseKey(name));
  return entry && infoOf(name, entry);
}

export interface WithLeaseOptions extends LeaseOptions {
  /** How often the lease is renewed while the work runs (default a third of `ttlMs`). */
  renewEveryMs?: number;
  /** Aborts the work's signal too; the lease is still released once the work settles. */
  signal?: AbortSignal;
}

/** What `withLease` did: the work's value, or nothing because another holder has the lease. */
export type LeaseOutcome<T> =
  | { status: 'done'; value: T }
  | { status: 'busy'; holder: string | undefined; expiresAt: string | undefined };

/**
 * Run `fn` while holding the lease `name`, or answer `busy` without running it when another holder has
 * it (background work started by another instance is normal, not an error). The lease is renewed every
 * `renewEveryMs` while `fn` runs and released when it settles. When a renewal finds the lease lost, `fn`'s
 * signal is aborted with a ConflictError, and that error is thrown once `fn` settles (unless `fn` threw its
 * own). A renewal that fails for another reason (a lost connection) is tried again at the next interval;
 * the lease is lost once its expiry passes.
 */
export async function withLease<T>(
  working: WorkingMemoryStore,
  scope: Scope,
  name: string,
  fn: (signal: AbortSignal, lease: Lease) => Promise<T> | T,
  options: WithLeaseOptions,
): Promise<LeaseOutcome<T>> {
  const checked = parseOrThrow(
    LeaseOptionsSchema.refine((o) => o.renewEveryMs === undefined || o.renewEveryMs < o.ttlMs, {
      message: 'renewEveryMs must be shorter than ttlMs',
      path: ['renewEveryMs'],
    }),
    { ttlMs: options.ttlMs, renewEveryMs: options.renewEveryMs },
    'lease options',
  );
  const renewEveryMs = checked.renewEveryMs ?? Math.max(1, Math.floor(checked.ttlMs / 3));
  const lease = await acquireLease(working, scope, name, options);
  if (!lease) {
    const current = await readLease(working, scope, name);
    return { status: 'busy', holder: current?.holder, expiresAt: current?.expiresAt };
  }
  const controller = new AbortController();
  const outer = options.signal;
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  let lost: ConflictError | undefined;
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = renewing.then(async () => {
      if (lost || !lease.held) return;
      try {
        if (await lease.renew()) return;
      } catch {
        if (lease.held) return; // not known to be lost: try again at the next interval
      }
      lost = new ConflictError(
        `The lease "${name}" was lost while its work ran (it expired or another holder took it).`,
        { details: { lease: name, holder: lease.holder } },
      );
      clearInterval(timer);
      controller.abort(lost);
    });
  }, renewEveryMs);
  try {
    const value = await fn(controller.signal, lease);
    if (lost) throw lost;
    return { status: 'done', value };
  } finally {
    clearInterval(timer);
    outer?.removeEventListener('abort', forward);
    await renewing;
    // A release that fails (a lost connection) leaves a lease that expires on its own.
    await lease.release().catch(() => false);
  }
}

function infoOf(name: string, entry: WorkingEntry): LeaseInfo {
  let value: z.infer<typeof LeaseValueSchema> | undefined;
  try {
    const parsed = LeaseValueSchema.safeParse(JSON.parse(entry.value));
    if (parsed.success) value = parsed.data;
  } catch {
    // not a lease's value: holder and acquiredAt stay undefined
  }
  return {
    name,
    holder: value?.holder,
    acquiredAt: value?.acquiredAt,
    expiresAt: entry.expiresAt,
    version: entry.version,
  };
}

class HeldLease implements Lease {
  readonly name: string;
  readonly holder: string;
  readonly acquiredAt: string;
  readonly #working: WorkingMemoryStore;
  readonly #scope: Scope;
  readonly #key: string;
  readonly #ttlMs: number;
  readonly #clock: Clock;
  #entry: WorkingEntry;
  #held = true;
  /** Renew and release of one lease run one after the other, never interleaved. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    working: WorkingMemoryStore,
    scope: Scope,
    name: string,
    entry: WorkingEntry,
    settings: { ttlMs: number; clock: Clock },
  ) {
    const info = infoOf(name, entry);
    this.name = name;
    this.holder = info.holder!;
    this.acquiredAt = info.acquiredAt!;
    this.#working = working;
    this.#scope = scope;
    this.#key = entry.key;
    this.#ttlMs = settings.ttlMs;
    this.#clock = settings.clock;
    this.#entry = entry;
  }

  get expiresAt(): string {
    return this.#entry.expiresAt;
  }

  get version(): number {
    return this.#entry.version;
  }

  get held(): boolean {
    return this.#held;
  }

  renew(): Promise<boolean> {
    return this.#serial(async () => {
      if (!(await this.#stillMine())) return false;
      try {
        this.#entry = await this.#working.set(this.#scope, this.#key, this.#entry.value, {
          ttlMs: this.#ttlMs,
          expectedVersion: this.#entry.version,
        });
        return true;
      } catch (error) {
        if (!isKiokuError(error, 'CONFLICT')) throw error;
        this.#held = false;
        return false;
      }
    });
  }

  release(): Promise<boolean> {
    return this.#serial(async () => {
      if (!(await this.#stillMine())) return false;
      this.#held = false;
      try {
        return await this.#working.delete(this.#scope, this.#key, { expectedVersion: this.#entry.version });
      } catch (error) {
        if (!isKiokuError(error, 'CONFLICT')) throw error;
        return false;
      }
    });
  }

  /** Held, not past its expiry by this holder's clock, and the stored entry is still the one it wrote. */
  async #stillMine(): Promise<boolean> {
    if (this.#held && this.#clock.now() < Date.parse(this.#entry.expiresAt)) {
      const current = await this.#working.get(this.#scope, this.#key);
      if (current?.version === this.#entry.version && current.value === this.#entry.value) return true;
    }
    this.#held = false;
    return false;
  }

  #serial<R>(step: () => Promise<R>): Promise<R> {
    const next = this.#queue.then(step, step);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
