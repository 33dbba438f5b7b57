import { ManualClock } from '@kioku/core/testing';
import { afterEach, beforeEach } from 'vitest';

/** What every test gets, fresh: a clock the harness hands to the store it creates. */
export interface SuiteContext {
  clock: ManualClock;
}

/** What a backend can promise. Tests that need a missing capability are skipped, never weakened. */
export interface StoreCapabilities {
  /**
   * The store takes every timestamp and TTL decision from `ctx.clock` (default true). When false, the
   * TTL tests are skipped and the suite waits real milliseconds where it needs time to pass.
   */
  controllableClock: boolean;
}

export const DEFAULT_CAPABILITIES: Readonly<StoreCapabilities> = Object.freeze({ controllableClock: true });

/**
 * How the suite gets stores of one kind from an adapter.
 *
 * `create` must return a store over empty storage (a fresh temp dir, database schema, key prefix or
 * collection): counts such as `sweep()`'s are asserted exactly. It is called once per test, and again
 * when a test needs a second, independent store (snapshot round trips).
 */
export interface StoreHarness<S> {
  name: string;
  /** A store using `ctx.clock` for time. */
  create(ctx: SuiteContext): S | Promise<S>;
  /** Called for every store `create` and `createTwin` returned, twins first. Should be idempotent. */
  destroy?(store: S): void | Promise<void>;
  /** A second store instance over the SAME storage as `store` (another connection/process view); optional. */
  createTwin?(store: S, ctx: SuiteContext): S | Promise<S>;
  capabilities?: Partial<StoreCapabilities>;
}

/** The clock's start when the store honours it: a fixed instant, so timestamps are predictable. */
export const SUITE_EPOCH = Date.UTC(2025, 0, 1);

/** How long `tick()` really waits for a store that keeps its own time: enough for a new millisecond. */
const REAL_TICK_MS = 3;

/** Per-test state the suites read through getters (vitest hooks fill it in). */
export interface Fixture<S> {
  readonly ctx: SuiteContext;
  readonly store: S;
  readonly caps: StoreCapabilities;
  /** Another store over fresh, separate storage (destroyed after the test). */
  fresh(): Promise<S>;
  /** A second instance over the same storage as `store`; only when the harness has `createTwin`. */
  twin(): Promise<S>;
  /**
   * Let time pass so the next timestamp differs: advances the manual clock by `ms` and, when the store
   * keeps its own time, really waits a few milliseconds (never the full `ms`).
   */
  tick(ms?: number): Promise<void>;
}

/** Register hooks that give every test a fresh context and store, and clean up after it. */
export function useHarness<S>(h: StoreHarness<S>): Fixture<S> {
  const caps: StoreCapabilities = { ...DEFAULT_CAPABILITIES, ...h.capabilities };
  let ctx: SuiteContext | undefined;
  let store: S | undefined;
  let extras: S[] = [];
  let twins: S[] = [];

  beforeEach(async () => {
    ctx = { clock: new ManualClock(caps.controllableClock ? SUITE_EPOCH : Date.now()) };
    extras = [];
    twins = [];
    store = await h.create(ctx);
  });

  afterEach(async () => {
    const all = [...twins, ...(store === undefined ? [] : [store]), ...extras];
    store = undefined;
    for (const s of all) await h.destroy?.(s);
  });

  const required = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is only available inside a test`);
    return value;
  };

  return {
    caps,
    get ctx() {
      return required(ctx, 'ctx');
    },
    get store() {
      return required(store, 'store');
    },
    async fresh() {
      const s = await h.create(required(ctx, 'ctx'));
      extras.push(s);
      return s;
    },
    async twin() {
      if (!h.createTwin) throw new Error(`harness "${h.name}" has no createTwin`);
      const t = await h.createTwin(required(store, 'store'), required(ctx, 'ctx'));
      twins.push(t);
      return t;
    },
    async tick(ms = 1) {
      required(ctx, 'ctx').clock.advance(ms);
      if (!caps.controllableClock) await new Promise((resolve) => setTimeout(resolve, REAL_TICK_MS));
    },
  };
}
