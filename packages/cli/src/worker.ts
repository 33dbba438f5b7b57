import { hostname } from 'node:os';
import { isKiokuError, KiokuBuilder, type KiokuStores, type StorageError } from '@kioku/core';
import { redactUrl } from '@kioku/core/adapter';
import type { PendingUserReport, RunPendingReport } from '@kioku/core/passes';
import { type OptionTable, parseCommandOptions, plural, required, userId, write } from './args.js';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { signalled } from './mcp.js';
import { loadChatModel } from './models.js';
import { openStores } from './stores.js';
import { startTelemetry } from './telemetry.js';

/*
 * `kioku worker`: the background memory work of a whole store, in a process of its own — what the app's
 * sessions have pending (extraction of the turns past each watermark, save_memory's enrichment
 * requests), user by user under each user's lease, so any number of workers and app instances share the
 * work without doing any of it twice.
 */

const string = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;

export const WORKER_OPTIONS = {
  store: string,
  model: string,
  users: string,
  poll: string,
  passes: string,
  grace: string,
  'lease-ttl': string,
  holder: string,
  once: flag,
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

export const WORKER_DEFAULTS = Object.freeze({ pollSeconds: 5, graceSeconds: 30, leaseTtlSeconds: 120 });

/** The longest wait between rounds after a store error (the wait doubles from `poll` up to this). */
const MAX_BACKOFF_MS = 30_000;

export async function workerCommand(
  args: string[],
  io: CliIo,
  usage: () => Promise<number>,
): Promise<number> {
  const values = parseCommandOptions('worker', WORKER_OPTIONS, args);
  if (values.help) return usage();
  const spec = required(values.store, '--store', 'postgres://kioku@db/app');
  const pollMs = seconds(values.poll, '--poll', WORKER_DEFAULTS.pollSeconds);
  const graceMs = seconds(values.grace, '--grace', WORKER_DEFAULTS.graceSeconds);
  const leaseTtlMs = seconds(values['lease-ttl'], '--lease-ttl', WORKER_DEFAULTS.leaseTtlSeconds);
  const passes = values.passes === undefined ? undefined : count(values.passes, '--passes');
  const users = values.users?.split(',').map((u) => userId(u.trim()));
  const holder = values.holder ?? `worker-${hostname()}-${process.pid}`;
  const model = await loadChatModel(values.model, 'kioku worker');
  // Every line goes through redactUrl: a store's error message may name its URL, password and all.
  const say = (line: string) =>
    write(io.stdout, `${new Date().toISOString()} ${redactUrl(line)}\n`).catch(() => {});

  const stop = new AbortController();
  const hard = new AbortController();
  const signals = signalled();
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let again: ReturnType<typeof signalled> | undefined;
  void signals.promise.then(async (signal) => {
    await say(`${signal}: finishing the pass under way (at most ${graceMs / 1000} s), then stopping`);
    stop.abort();
    graceTimer = setTimeout(() => {
      void say('grace time over: abandoning the pass under way (its lease expires on its own)');
      hard.abort();
    }, graceMs);
    graceTimer.unref();
    again = signalled();
    void again.promise.then(() => {
      void say('second signal: abandoning the pass under way');
      hard.abort();
    });
  });

  const stores = await openWhenReachable(
    () => openStores(spec, { role: 'source', ...(io.clock ? { clock: io.clock } : {}) }),
    (line) => say(line),
    pollMs,
    stop.signal,
  );
  if (!stores) {
    signals.dispose();
    again?.dispose();
    if (graceTimer) clearTimeout(graceTimer);
    await say('stopped before the store could be reached');
    return 0;
  }
  // Registered before Kioku is built, so its spans and metrics go to the exporter.
  const telemetry = await startTelemetry('kioku-worker').catch(async (error: unknown) => {
    await closeStores(stores);
    throw error;
  });
  await say(`worker ${holder} on ${redactUrl(spec)}${users ? ` for ${users.join(', ')}` : ''}`);
  if (telemetry) await say(`exporting OpenTelemetry traces and metrics to ${telemetry.endpoint}`);
  let failed = false;
  try {
    const kioku = new KiokuBuilder({ stores, model, ...(io.clock ? { clock: io.clock } : {}) })
      .withExtraction({ recover: false })
      // Only for save_memory's enrichment requests, which it drains with the turns (no conversation runs here).
      .withFacts({ mode: 'recall' })
      .build();
    let backoff = pollMs;
    // A user another holder keeps is said once, not at every poll.
    const busy = new Set<string>();
    const onUser = (user: PendingUserReport) => {
      const key = `${user.userId}\u0000${user.agentId ?? ''}`;
      if (user.status === 'busy') {
        if (busy.has(key)) return;
        busy.add(key);
      } else busy.delete(key);
      void say(describe(user));
    };
    while (!stop.signal.aborted) {
      let report: RunPendingReport;
      try {
        report = await kioku.runPending({
          ...(users ? { users } : {}),
          ...(passes !== undefined ? { budget: { passes } } : {}),
          stop: stop.signal,
          signal: hard.signal,
          holder,
          leaseTtlMs,
          onUser,
        });
        backoff = pollMs;
      } catch (error) {
        if (hard.signal.aborted) break;
        // The store is down or restarting: its clients reconnect; try again later.
        await say(
          `store error: ${(error as Error).message}; trying again in ${Math.round(backoff / 1000)} s`,
        );
        await pause(backoff, stop.signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        continue;
      }
      if (report.users.some((u) => u.status === 'failed')) failed = true;
      if (values.once) break;
      // Right away while there is work; after `poll` when there was none (or only other holders').
      if (!report.users.some((u) => u.passes > 0)) await pause(pollMs, stop.signal);
    }
    await kioku.close();
  } finally {
    signals.dispose();
    again?.dispose();
    if (graceTimer) clearTimeout(graceTimer);
    await closeStores(stores);
    await telemetry?.shutdown();
    await say('stopped');
  }
  return failed && values.once ? 1 : 0;
}

/**
 * The stores, once they can be opened: a store that is down or restarting (a retryable StorageError) is
 * waited for, with the wait doubling from `pollMs` to MAX_BACKOFF_MS and said each time, as an operator's
 * supervisor would otherwise restart the worker in a loop. Undefined when `stop` came first; any other error
 * (a wrong URL, a missing schema) is thrown at once.
 */
async function openWhenReachable(
  open: () => Promise<KiokuStores>,
  say: (line: string) => Promise<void>,
  pollMs: number,
  stop: AbortSignal,
): Promise<KiokuStores | undefined> {
  let backoff = Math.max(pollMs, 100);
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (!(isKiokuError(error, 'STORAGE') && (error as StorageError).retryable)) throw error;
      await say(
        `waiting for the store: ${(error as Error).message}; trying again in ${Math.round(backoff / 100) / 10} s`,
      );
      await pause(backoff, stop);
      if (stop.aborted) return undefined;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

function describe(user: PendingUserReport): string {
  const who = user.agentId === undefined ? user.userId : `${user.userId} (agent ${user.agentId})`;
  if (user.status === 'busy') return `${who}: busy (another worker or app instance holds its lease)`;
  const did = `${plural(user.turns, 'turn')} in ${plural(user.passes, 'pass')}, ${plural(user.changesets, 'changeset')} applied`;
  const extra = [
    user.lost > 0 ? `${plural(user.lost, 'pass')} discarded (another was first)` : '',
    user.skipped > 0 ? `${plural(user.skipped, 'turn')} skipped after repeated failures` : '',
  ].filter(Boolean);
  const tail = extra.length > 0 ? `; ${extra.join('; ')}` : '';
  if (user.status === 'failed') return `${who}: failed after ${did}${tail}: ${user.error}`;
  if (user.status === 'partial') return `${who}: ${did}${tail}; more left for the next round`;
  return `${who}: ${did}${tail}`;
}

function seconds(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new UsageError(`${option} takes a number of seconds (got "${value}").`);
  return Math.round(n * 1000);
}

function count(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${option} takes a positive whole number (got "${value}").`);
  return n;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

async function closeStores(stores: KiokuStores): Promise<void> {
  await stores.close().catch(() => {});
}
