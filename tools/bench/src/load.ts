/**
 * Kioku under load, as an operator runs it: P app processes × C concurrent users each, every user a closed
 * loop of memory turns (`Conversation.prepare` + `record`, an instant model), on a PostgreSQL cluster or a
 * redis-server of the bench's own (never the shared servers) or a SQLite file, with N `kioku worker`
 * processes extracting the turns, and faults injected on the way.
 *
 *   pnpm bench:load [--store postgres,redis,sqlite] [--shape 1x4,1x25,4x25] [--facts 1000] [--docs 3]
 *                   [--seconds 15] [--warmup 3] [--pool 2] [--via pgbouncer] [--server-login-retry S]
 *                   [--workers N] [--lease-ttl 5] [--drain 120]
 *                   [--faults restart@S,kill-worker@S,kill-app@S] [--json]
 *                   [--statements] [--cpu-prof <dir>] [--no-analyse]
 *
 * Per user: `--facts` facts and `--docs` documents; the app has fact recall, working memory, conversation
 * replay, knowledge and background extraction that never runs in the app: every turn waits in the outbox.
 * `--workers N` starts N real `kioku worker` processes (the built CLI, else its source) on the same store,
 * leases of `--lease-ttl` s, calling an OpenAI-compatible scripted model (@kioku/openai-test-server) that
 * answers each exchange with the user's words as one fact; after the run they get `--drain` s at most to
 * empty the outbox (progress on stderr), then SIGTERM.
 *
 * Faults, seconds into the timed run: `restart@S` restarts the store's server (`pg_ctl restart -m fast`, or
 * redis-server with its AOF; `pg-restart@S` is the same); `kill-worker@S` SIGKILLs a worker and starts
 * another; `kill-app@S` SIGKILLs an app process and starts another for its users (new sessions, turn ids of
 * a new generation). Apps retry a failed record with its turn id; they report each acknowledged turn at once
 * (IPC), so a killed app's turns count. `--server-login-retry S` sets PgBouncer's refusal after a failed
 * login (its default 15 s keeps every client out that long after a restart).
 *
 * Prints turns/s, p50/p95/p99 of a memory turn, errors by type, CPU per turn in the app processes and in
 * the server (its processes' CPU time over the run, from /proc), statements per turn on PostgreSQL
 * (pg_stat_statements); then the processes (started, killed by the bench, crashed: any other exit than 0),
 * the most client connections PostgreSQL had (pg_stat_activity, sampled every 2 s), and the audit:
 * acknowledged turns missing from the transcripts, transcript duplicates, acknowledged turns never
 * extracted and turns extracted twice (each turn's user message carries its turn id, which the model copies
 * into the fact: counted per turn id among the user's facts), turns the model was asked for twice (a pass
 * killed before it committed is asked again: allowed), the drain time, and the recovery: seconds from the
 * server's return to the end of the first second whose rate is ≥ 90 % of the mean before the first fault.
 * Then turns/s second by second and the backlog every 2 s (sessions pending / turns past the watermark).
 * `--statements` lists the server's statements with calls per turn and mean time; `--cpu-prof <dir>` writes
 * a V8 CPU profile of each app's timed run. The seeded tables are analysed before the run (as autovacuum
 * soon does); `--no-analyse` leaves them bare.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Fact, isKiokuError, KiokuBuilder, type KiokuStores, StorageError } from '@kioku/core';
import { SESSION_DEFAULTS } from '@kioku/core/adapter';
import { ScriptedModel } from '@kioku/core/testing';
import { PrivatePgBouncer, PrivatePostgres, PrivateRedis } from '@kioku/private-servers';
import { createPostgresStores, DEFAULT_POOL_SIZE } from '@kioku/store-postgres';
import { createRedisStores } from '@kioku/store-redis';
import { createSqliteStores } from '@kioku/store-sqlite';
import postgres from 'postgres';
import { type CpuProfileRecorder, startCpuProfile } from './cpu-profile.js';
import { factSeeds, QUERIES, seedFact } from './facts.js';
import { type Fault, parseFaults, perSecond, recoverySeconds } from './load-faults.js';
import {
  backlog,
  crashed,
  extractionAudit,
  extractionModelServer,
  type ProcessEnd,
  turnMark,
  WorkerFleet,
} from './load-workers.js';
import { cliArgs, flagValue, percentile, table } from './util.js';

const args = cliArgs();
const flag = (name: string) => flagValue(args, `--${name}`);

type StoreKind = 'postgres' | 'redis' | 'sqlite';

interface ChildTask {
  store: StoreKind;
  url: string;
  pool: number;
  /** Through PgBouncer 1.18 in transaction mode: no named prepared statements. */
  prepare: boolean;
  users: string[];
  seconds: number;
  /** Write a V8 CPU profile of the timed run here (`--cpu-prof <dir>`). */
  cpuProfileDir?: string;
  index: number;
  /** 0 for the first app of these users, 1 for the one started after it was killed, …: in its turn ids. */
  generation: number;
}

/** A turn whose record() resolved. */
interface Acknowledgement {
  ack: string;
  userId: string;
  /** The memory turn's latency; `timed` when it started after the warm-up. */
  ms: number;
  timed: boolean;
  /** When record() resolved (epoch ms). */
  at: number;
}

/**
 * What an app sends every 20 ms: the turns acknowledged since. One IPC message per turn took a twentieth
 * of the app's CPU from the turns it measures; a killed app's last 20 ms of turns are stored but not
 * counted as acknowledged, which the audit allows (it looks for acknowledged turns that are missing).
 */
interface Acknowledgements {
  acks: Acknowledgement[];
}

const ACK_EVERY_MS = 20;

interface ChildReport {
  errors: Record<string, number>;
  cpuMs: number;
  retries: number;
}

const userId = (i: number) => `load-user-${i}`;

/**
 * The apps' extraction trigger: never in the app (neither by turns nor by the tokens of the turns, 2,000 by
 * default), so every turn waits in the outbox for `kioku worker`, and an app holds no user's lease.
 */
const APP_NEVER_EXTRACTS = { turns: 1_000_000, tokens: 1_000_000_000, idleMs: false } as const;

function open(
  store: StoreKind,
  url: string,
  pool: number,
  prepare = true,
): KiokuStores & { setup(): Promise<unknown> } {
  // Through PgBouncer 1.18 in transaction mode: no named statements, and one query at a time per
  // connection (postgres.js 4's pipelined queries hung there).
  if (store === 'postgres')
    return createPostgresStores({
      url,
      clientOptions: prepare ? { max: pool } : { max: pool, prepare: false, max_pipeline: 1 },
    });
  if (store === 'redis') return createRedisStores({ url });
  return createSqliteStores({ file: url });
}

// ---- the app process --------------------------------------------------------------------------------

/** Once the app is built: when the timed run starts (epoch ms); every process's turns before it are warm-up. */
function ready(): Promise<number> {
  return new Promise((resolve) => {
    process.once('message', (m: { timedAt: number }) => resolve(m.timedAt));
    process.send!({ ready: true });
  });
}

async function runChild(task: ChildTask): Promise<ChildReport> {
  const stores = open(task.store, task.url, task.pool, task.prepare);
  const kioku = new KiokuBuilder({ stores, model: new ScriptedModel() })
    .withMemory()
    .withKnowledge()
    .withExtraction({ trigger: APP_NEVER_EXTRACTS, recover: false })
    .build();
  const report: ChildReport = { errors: {}, cpuMs: 0, retries: 0 };
  const timedAt = await ready();
  const warmupEnd = performance.now() + (timedAt - Date.now());
  const end = warmupEnd + task.seconds * 1000;
  let cpuStart: NodeJS.CpuUsage | undefined;
  let profile: Promise<CpuProfileRecorder> | undefined;

  let unsent: Acknowledgement[] = [];
  const sendAcks = () => {
    if (unsent.length === 0) return;
    process.send!({ acks: unsent } satisfies Acknowledgements);
    unsent = [];
  };
  const user = async (id: string, n: number) => {
    // Under load (or a fault) creating the session can pass its deadline: retried, as an app would.
    let convo: Awaited<ReturnType<typeof kioku.startConversation>> | undefined;
    for (let attempt = 0; !convo; attempt++) {
      try {
        convo = await kioku.startConversation({ userId: id });
      } catch (error) {
        if (!(error instanceof StorageError && error.retryable && attempt < 20)) throw error;
        report.retries++;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    for (let t = 0; performance.now() < end; t++) {
      const timed = performance.now() >= warmupEnd;
      if (timed && !cpuStart) {
        cpuStart = process.cpuUsage();
        if (task.cpuProfileDir)
          profile = startCpuProfile(task.cpuProfileDir, `load-${task.store}-${task.index}`);
      }
      const question = QUERIES[(t + n) % QUERIES.length]!;
      // One term with digits per turn (`g0t12`): the extraction's near-duplicate check never takes two
      // turns asking the same question for one (`0-0-10` and `0-0-0` have the same numbers).
      const turnId = `${id}-g${task.generation}t${t}`;
      const start = performance.now();
      try {
        await convo.prepare(question);
        const messages = [
          // The mark names the turn for the extraction audit: the model copies it into the turn's fact.
          { role: 'user' as const, content: `${question} ${turnMark(turnId)}` },
          { role: 'assistant' as const, content: `Noted (${t}).` },
        ];
        // A record that failed may have been stored: retried with its turn id, it is stored once.
        for (let attempt = 0; ; attempt++) {
          try {
            await convo.record(messages, { turnId });
            break;
          } catch (error) {
            if (
              !(
                error instanceof StorageError &&
                error.retryable &&
                attempt < 20 &&
                performance.now() < end + 30_000
              )
            )
              throw error;
            report.retries++;
            await new Promise((r) => setTimeout(r, 250));
          }
        }
        unsent.push({ ack: turnId, userId: id, ms: performance.now() - start, timed, at: Date.now() });
      } catch (error) {
        const kind = isKiokuError(error) ? error.code : error instanceof Error ? error.name : 'unknown';
        report.errors[kind] = (report.errors[kind] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const acking = setInterval(sendAcks, ACK_EVERY_MS);
  await Promise.all(task.users.map((id, n) => user(id, n)));
  clearInterval(acking);
  sendAcks();
  const cpu = process.cpuUsage(cpuStart);
  report.cpuMs = (cpu.user + cpu.system) / 1000;
  if (profile) process.stderr.write(`  CPU profile: ${await (await profile).stop()}\n`);
  await stores.close();
  return report;
}

if (process.argv.includes('--child')) {
  process.once('message', (task: ChildTask) => {
    runChild(task).then(
      (report) => process.send!(report, () => process.exit(0)),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

// ---- the bench ---------------------------------------------------------------------------------------

/** CPU time (ms) of a process and its children, living or exited, from /proc (Linux). */
function treeCpuMs(rootPid: number): number {
  const tick = 1000 / 100; // USER_HZ
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  let total = 0;
  const visit = (pid: number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime, stime, and cutime, cstime: the backends that have exited count in their parent's.
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * tick;
    } catch {}
    for (const c of children(pid)) visit(c);
  };
  visit(rootPid);
  return total;
}

interface Server {
  url: string;
  /** Where the apps connect: the server, or PgBouncer in front of it. */
  appUrl: string;
  /** `kioku worker --store`: the apps' address with the CLI's options (pool size, no prepared statements). */
  workerUrl: string;
  /** Client connections the server has now (PostgreSQL: pg_stat_activity). */
  connections?(): Promise<number>;
  cpuMs(): number;
  restart?(): Promise<void>;
  statements?(): Promise<number>;
  resetStatements?(): Promise<void>;
  /** After seeding: the statistics autovacuum would have gathered within its first minute. */
  analyse?(): Promise<void>;
  /** The statements run since the last reset, most calls first (pg_stat_statements). */
  topStatements?(): Promise<{ calls: number; meanMs: number; query: string }[]>;
  destroy(): Promise<void>;
}

async function startServer(store: StoreKind, options: Options): Promise<Server> {
  const viaPgBouncer = options.viaPgBouncer;
  if (store === 'postgres') {
    const pg = await PrivatePostgres.start({
      preload: ['pg_stat_statements'],
      // A server that runs for hours analyses a table as it grows (autovacuum looks every minute); this
      // one runs for seconds, so it looks every 5 s. Without it the transcripts, empty when seeding ends,
      // keep the statistics of an empty table and their plans scan every entry of every session.
      settings: { max_connections: 200, autovacuum_naptime: '5s' },
    });
    const url = pg.url();
    const client = postgres(url, { max: 1, onnotice: () => {} });
    const bouncer = viaPgBouncer
      ? await PrivatePgBouncer.start({
          serverPort: pg.port,
          ...(options.serverLoginRetry !== undefined ? { serverLoginRetry: options.serverLoginRetry } : {}),
        })
      : undefined;
    await client`create extension if not exists pg_stat_statements`;
    return {
      url,
      appUrl: bouncer ? bouncer.url('postgres') : url,
      workerUrl: bouncer ? `${bouncer.url('postgres')}?prepare=false` : url,
      connections: async () => {
        const [row] = await client<
          { n: string }[]
        >`select count(*)::text as n from pg_stat_activity where backend_type = 'client backend'`;
        return Number(row!.n);
      },
      cpuMs: () => treeCpuMs(pg.pid() ?? 0) + (bouncer?.pid ? treeCpuMs(bouncer.pid) : 0),
      restart: () => pg.restart(),
      statements: async () => {
        const [row] = await client<
          { n: string }[]
        >`select coalesce(sum(calls), 0)::text as n from pg_stat_statements where query not ilike '%pg_stat_statements%'`;
        return Number(row!.n);
      },
      analyse: async () => {
        await client.unsafe('vacuum (analyze)');
      },
      resetStatements: async () => {
        await client`select pg_stat_statements_reset()`;
      },
      topStatements: async () => {
        const rows = await client<{ calls: string; mean: number; query: string }[]>`
          select calls::text, mean_exec_time as mean, query from pg_stat_statements
          where query not ilike '%pg_stat_statements%' order by calls desc limit 25`;
        return rows.map((r) => ({ calls: Number(r.calls), meanMs: r.mean, query: r.query }));
      },
      destroy: async () => {
        await client.end();
        await bouncer?.destroy();
        await pg.destroy();
      },
    };
  }
  if (store === 'redis') {
    const redis = await PrivateRedis.start({ appendfsync: 'everysec' });
    return {
      url: redis.url,
      appUrl: redis.url,
      workerUrl: redis.url,
      cpuMs: () => treeCpuMs(redis.pid ?? 0),
      restart: () => redis.restart(),
      destroy: () => redis.destroy(),
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kioku-load-'));
  const file = path.join(dir, 'kioku.db');
  return {
    url: file,
    appUrl: file,
    workerUrl: `sqlite:${file}`,
    cpuMs: () => 0,
    destroy: () => rm(dir, { recursive: true, force: true }),
  };
}

async function seed(
  store: StoreKind,
  url: string,
  users: number,
  facts: number,
  docs: number,
): Promise<void> {
  const stores = open(store, url, 4);
  await stores.setup();
  const seeds = factSeeds(facts + docs * 10);
  const now = new Date().toISOString();
  for (let u = 0; u < users; u++) {
    const id = userId(u);
    const records: Fact[] = seeds.slice(0, facts).map((s, i) => seedFact(s, i, id, now));
    await stores.facts.restore({
      format: 'kioku.snapshot',
      schemaVersion: 1,
      kind: 'facts',
      createdAt: now,
      selector: { userId: id },
      records,
    });
    for (let d = 0; d < docs; d++) {
      const body = seeds.slice(facts + d * 10, facts + d * 10 + 10).map((s) => s.content);
      await stores.documents.create({ userId: id }, { title: `Handbook ${d + 1}`, text: body.join(' ') });
    }
    if (u % 25 === 24) process.stderr.write(`  seeded ${u + 1}/${users} users\n`);
  }
  await stores.close();
}

/**
 * Round trips (and Node CPU) of one user's turn alone: statements sent in one burst (before the process waits for the
 * network again: in the same macrotask, as `Promise.all` sends them) count as one, postgres.js pipelining
 * them or sending them over several connections at once. Counted in the bench process (postgres.js's
 * `debug` hook) over PROBE_TURNS turns after as many warm-up turns, after the run and its audit.
 */
async function roundTrips(url: string, viaPgBouncer: boolean) {
  let statements = 0;
  let trips = 0;
  let burst = false;
  const debug = () => {
    statements++;
    if (burst) return;
    burst = true;
    trips++;
    setImmediate(() => {
      burst = false;
    });
  };
  const stores = createPostgresStores({
    url,
    clientOptions: viaPgBouncer ? { max: 4, prepare: false, max_pipeline: 1, debug } : { max: 4, debug },
  });
  const kioku = new KiokuBuilder({ stores, model: new ScriptedModel() })
    .withMemory()
    .withKnowledge()
    .withExtraction({ trigger: APP_NEVER_EXTRACTS, recover: false })
    .build();
  const convo = await kioku.startConversation({ userId: userId(0) });
  const turn = async (t: number) => {
    const question = QUERIES[t % QUERIES.length]!;
    await convo.prepare(question);
    await convo.record([
      { role: 'user', content: question },
      { role: 'assistant', content: `Noted (${t}).` },
    ]);
  };
  for (let t = 0; t < PROBE_TURNS; t++) await turn(t);
  statements = 0;
  trips = 0;
  const cpu0 = process.cpuUsage();
  for (let t = 0; t < PROBE_TURNS; t++) await turn(t);
  const cpu = process.cpuUsage(cpu0);
  await stores.close();
  return {
    statements: statements / PROBE_TURNS,
    roundTrips: trips / PROBE_TURNS,
    nodeCpuMs: (cpu.user + cpu.system) / 1000 / PROBE_TURNS,
  };
}

const PROBE_TURNS = 50;

const TRANSCRIPT_CAP = SESSION_DEFAULTS.transcriptCap;

async function audit(store: StoreKind, url: string, acknowledged: Record<string, string[]>) {
  const stores = open(store, url, 2);
  let missing = 0;
  let duplicates = 0;
  for (const [id, turns] of Object.entries(acknowledged)) {
    const counts = new Map<string, number>();
    for (const session of await stores.sessions.list({ userId: id })) {
      for (const entry of await stores.sessions.transcriptReadLast(
        { userId: id },
        session.id,
        TRANSCRIPT_CAP,
      )) {
        if (entry.turnId) counts.set(entry.turnId, (counts.get(entry.turnId) ?? 0) + 1);
      }
    }
    // A session keeps its last transcriptCap entries (older ones are evicted): two per turn.
    for (const turn of turns.slice(-TRANSCRIPT_CAP / 2)) if (!counts.has(turn)) missing++;
    for (const n of counts.values()) if (n > 1) duplicates++;
  }
  await stores.close();
  return { missing, duplicates };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One app process: its users' closed loops, its acknowledgements as they come, how it ended. */
interface App {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<{ end: ProcessEnd; report?: ChildReport }>;
}

/** A sample of the run every 2 s: the outbox backlog and the server's connections. */
interface Sample {
  t: number;
  pendingSessions?: number;
  pendingTurns?: number;
  connections?: number;
}

async function runShape(store: StoreKind, processes: number, usersEach: number, options: Options) {
  process.stderr.write(`${store} ${processes}×${usersEach}: starting the server, seeding…\n`);
  const server = await startServer(store, options);
  const model = options.workers > 0 ? await extractionModelServer() : undefined;
  const fleet = model ? new WorkerFleet(server.workerUrl, model.env, options.leaseTtl) : undefined;
  const observer = open(store, server.url, 1);
  try {
    const users = processes * usersEach;
    await seed(store, server.url, users, options.facts, options.docs);
    // Without statistics (a restore below VACUUM_AFTER_ROWS leaves none) the planner guesses one row per
    // partition and reads facts by id through the wrong index: no deployment runs like that for long.
    if (options.analyse) await server.analyse?.();
    fleet?.start(options.workers);

    // Acknowledgements as the apps send them: the turns of an app killed later still count.
    const acknowledged: Record<string, string[]> = {};
    const latencies: number[] = [];
    const ackTimes: number[] = [];
    let timedAt: number | undefined;
    const appEnds: ProcessEnd[] = [];
    const killedApps = new Set<ChildProcess>();
    const startApp = (p: number, generation: number): App => {
      const name = `app ${p}${generation ? `.${generation}` : ''}`;
      const child = fork(new URL(import.meta.url).pathname, ['--child'], {
        execArgv: process.execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const task: ChildTask = {
        store,
        url: server.appUrl,
        pool: options.pool,
        prepare: !options.viaPgBouncer,
        users: Array.from({ length: usersEach }, (_, u) => userId(p * usersEach + u)),
        seconds: options.seconds,
        index: p,
        generation,
        ...(options.cpuProfileDir ? { cpuProfileDir: options.cpuProfileDir } : {}),
      };
      child.send(task);
      let report: ChildReport | undefined;
      const ready = new Promise<void>((resolve) => {
        child.on('message', (m: { ready: true } | Acknowledgements | ChildReport) => {
          if ('ready' in m) {
            // An app started in place of a killed one joins the timed run under way.
            if (timedAt !== undefined) child.send({ timedAt });
            resolve();
          } else if ('acks' in m) {
            for (const a of m.acks) {
              acknowledged[a.userId] ??= [];
              acknowledged[a.userId]!.push(a.ack);
              if (a.timed) {
                latencies.push(a.ms);
                ackTimes.push((a.at - timedAt!) / 1000);
              }
            }
          } else report = m;
        });
      });
      // 'close': after the exit and every message the app sent before it.
      const done = new Promise<{ end: ProcessEnd; report?: ChildReport }>((resolve) =>
        child.once('close', (code, signal) => {
          const end = { name, killed: killedApps.has(child), code, signal };
          appEnds.push(end);
          resolve({ end, ...(report ? { report } : {}) });
        }),
      );
      return { child, ready, done };
    };
    const apps = Array.from({ length: processes }, (_, p) => startApp(p, 0));
    const generations = apps.map(() => 0);
    // The timed run (and the server's counters) start once every app is up (loading one takes seconds,
    // many more on a busy machine), after the warm-up.
    // An app that dies while loading stops the bench (its users would never run).
    const diedLoading = new Promise<never>((_, reject) => {
      for (const app of apps)
        void app.done.then(({ end }) =>
          reject(new Error(`${end.name} exited (${end.code ?? end.signal}) while loading`)),
        );
    });
    diedLoading.catch(() => {});
    await Promise.race([Promise.all(apps.map((a) => a.ready)), diedLoading]);
    timedAt = Date.now() + options.warmup * 1000;
    for (const app of apps) app.child.send({ timedAt });
    await sleep(timedAt - Date.now());
    let serverCpu0 = server.cpuMs();
    let serverCpuBefore = 0;
    await server.resetStatements?.();

    const samples: Sample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t = (Date.now() - timedAt!) / 1000;
        const sample: Sample = { t };
        try {
          const b = await backlog(observer, { turns: options.workers > 0 });
          sample.pendingSessions = b.sessions;
          if (b.turns !== undefined) sample.pendingTurns = b.turns;
        } catch {}
        try {
          if (server.connections) sample.connections = await server.connections();
        } catch {}
        samples.push(sample);
        await sleep(Math.max(0, 2000 - ((Date.now() - timedAt!) / 1000 - t) * 1000));
      }
    })();

    let backAt: number | undefined;
    const faultLog: string[] = [];
    const inject = async (fault: Fault) => {
      await sleep(timedAt! + fault.at * 1000 - Date.now());
      const at = () => ((Date.now() - timedAt!) / 1000).toFixed(1);
      if (fault.kind === 'restart' && server.restart) {
        process.stderr.write(`  ${at()} s: restarting ${store}\n`);
        // The restarted server is a new process: its CPU counts from there.
        serverCpuBefore += server.cpuMs() - serverCpu0;
        await server.restart();
        serverCpu0 = server.cpuMs();
        backAt = (Date.now() - timedAt!) / 1000;
        faultLog.push(`restart@${fault.at} (back at ${backAt.toFixed(1)} s)`);
      } else if (fault.kind === 'kill-worker' && fleet) {
        const name = await fleet.killOne();
        process.stderr.write(`  ${at()} s: killed ${name} (SIGKILL), started another\n`);
        faultLog.push(`kill-worker@${fault.at}`);
      } else if (fault.kind === 'kill-app') {
        const p = processes - 1;
        killedApps.add(apps[p]!.child);
        apps[p]!.child.kill('SIGKILL');
        await apps[p]!.done;
        apps[p] = startApp(p, ++generations[p]!);
        process.stderr.write(`  ${at()} s: killed app ${p} (SIGKILL), started another for its users\n`);
        faultLog.push(`kill-app@${fault.at}`);
      } else faultLog.push(`${fault.kind}@${fault.at} (not on ${store})`);
    };
    await Promise.all(options.faults.map(inject));
    const ends = await Promise.all(apps.map((a) => a.done));
    const reports = ends.flatMap((e) => (e.report ? [e.report] : []));
    const serverCpu = serverCpuBefore + server.cpuMs() - serverCpu0;
    latencies.sort((a, b) => a - b);
    const turns = latencies.length;
    const statements = server.statements ? await server.statements() : undefined;
    if (options.showStatements && server.topStatements) {
      const top = await server.topStatements();
      const perTurn = (n: number) => (n / Math.max(1, turns)).toFixed(2);
      process.stderr.write('  calls/turn  mean ms  statement\n');
      for (const t of top)
        process.stderr.write(
          `  ${perTurn(t.calls).padStart(10)}  ${t.meanMs.toFixed(3).padStart(7)}  ${t.query.replace(/\s+/g, ' ').slice(0, 220)}\n`,
        );
    }

    // The workers finish the backlog (bounded), then stop; the audit reads the store as they left it.
    let drainS: number | undefined;
    if (fleet) {
      const drainStart = Date.now();
      for (;;) {
        const pending = await backlog(observer, { turns: true }).catch(() => undefined);
        const waited = (Date.now() - drainStart) / 1000;
        if (pending?.sessions === 0) {
          drainS = waited;
          break;
        }
        if (waited > options.drainSeconds) break;
        process.stderr.write(
          `  draining: ${pending?.sessions ?? '?'} sessions, ${pending?.turns ?? '?'} turns to extract after ${waited.toFixed(0)} s\n`,
        );
        await sleep(2000);
      }
      await fleet.stop();
    }
    sampling = false;
    await sampler;

    const errors: Record<string, number> = {};
    for (const r of reports) for (const [k, n] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + n;
    const checked = await audit(store, server.url, acknowledged);
    const extraction = model ? await extractionAudit(observer, acknowledged, model.asked) : undefined;
    const trips = store === 'postgres' ? await roundTrips(server.url, options.viaPgBouncer) : undefined;
    const rates = perSecond(ackTimes, options.seconds);
    const firstFault = options.faults[0]?.at;
    const processEnds = [...appEnds, ...(fleet?.ends ?? [])];
    return {
      store,
      shape: `${processes}×${usersEach}`,
      turnsPerSecond: turns / options.seconds,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      nodeCpuPerTurnMs: reports.reduce((s, r) => s + r.cpuMs, 0) / Math.max(1, turns),
      serverCpuPerTurnMs: store === 'sqlite' ? undefined : serverCpu / Math.max(1, turns),
      statementsPerTurn: statements === undefined ? undefined : statements / Math.max(1, turns),
      probeStatementsPerTurn: trips?.statements,
      roundTripsPerTurn: trips?.roundTrips,
      probeNodeCpuMs: trips?.nodeCpuMs,
      errors,
      retries: reports.reduce((s, r) => s + r.retries, 0),
      maxConnections: Math.max(...samples.map((s) => s.connections ?? 0)) || undefined,
      processes: {
        apps: appEnds.length,
        workers: fleet?.ends.length ?? 0,
        killed: processEnds.filter((e) => e.killed).length,
        crashed: processEnds.filter(crashed).map((e) => `${e.name} (${e.code ?? e.signal})`),
      },
      acknowledged: Object.values(acknowledged).reduce((s, t) => s + t.length, 0),
      acknowledgedMissing: checked.missing,
      transcriptDuplicates: checked.duplicates,
      neverExtracted: extraction?.neverExtracted,
      extractedTwice: extraction?.extractedTwice,
      askedTwice: extraction?.askedTwice,
      drainS,
      faults: faultLog,
      rates,
      recoveryS:
        backAt !== undefined && firstFault !== undefined
          ? recoverySeconds(rates, firstFault, backAt)
          : undefined,
      samples,
    };
  } finally {
    await fleet?.stop().catch(() => {});
    await observer.close().catch(() => {});
    await model?.server.close();
    await server.destroy();
  }
}

interface Options {
  facts: number;
  docs: number;
  seconds: number;
  warmup: number;
  pool: number;
  viaPgBouncer: boolean;
  showStatements: boolean;
  /** `--no-analyse`: run on the tables as the seeding left them, without statistics. */
  analyse: boolean;
  cpuProfileDir?: string;
  faults: Fault[];
  /** `kioku worker` processes (0: none, the turns wait in the outbox). */
  workers: number;
  /** The workers' lease (`--lease-ttl`): how long a killed worker's users wait for another. */
  leaseTtl: number;
  /** At most this long for the workers to finish the backlog after the run. */
  drainSeconds: number;
  /** PgBouncer's `server_login_retry` (s; its default 15): how long it refuses clients after a failed login. */
  serverLoginRetry?: number;
}

async function main() {
  const stores = (flag('store') ?? 'postgres,redis,sqlite').split(',') as StoreKind[];
  const shapes = (flag('shape') ?? '1x4,1x25,4x25')
    .split(',')
    .map((s) => s.split('x').map(Number) as [number, number]);
  const faults = flag('faults');
  const options: Options = {
    facts: Number(flag('facts') ?? 1000),
    docs: Number(flag('docs') ?? 3),
    seconds: Number(flag('seconds') ?? 15),
    warmup: Number(flag('warmup') ?? 3),
    // What an app gets unless it sizes its pool (`clientOptions.max`).
    pool: Number(flag('pool') ?? DEFAULT_POOL_SIZE),
    viaPgBouncer: flag('via') === 'pgbouncer',
    showStatements: args.includes('--statements'),
    analyse: !args.includes('--no-analyse'),
    ...(flag('cpu-prof') ? { cpuProfileDir: path.resolve(flag('cpu-prof')!) } : {}),
    faults: parseFaults(faults),
    workers: Number(flag('workers') ?? 0),
    leaseTtl: Number(flag('lease-ttl') ?? 5),
    drainSeconds: Number(flag('drain') ?? 120),
    ...(flag('server-login-retry') ? { serverLoginRetry: Number(flag('server-login-retry')) } : {}),
  };
  const rows = [];
  for (const store of stores) for (const [p, c] of shapes) rows.push(await runShape(store, p, c, options));
  const f = (n: number | undefined, d = 1) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(d));
  console.log(
    table(
      [
        'store',
        'processes×users',
        'turns/s',
        'p50 / p95 / p99 ms',
        'CPU/turn ms (Node · server)',
        'statements/turn',
        'one user: statements · round trips · Node CPU ms',
        'errors',
        'retries',
        'acked missing',
        'duplicates',
      ],
      rows.map((r) => [
        r.store,
        r.shape,
        f(r.turnsPerSecond, 0),
        `${f(r.p50)} / ${f(r.p95)} / ${f(r.p99)}`,
        `${f(r.nodeCpuPerTurnMs, 2)} · ${f(r.serverCpuPerTurnMs, 2)}`,
        f(r.statementsPerTurn, 1),
        `${f(r.probeStatementsPerTurn, 1)} · ${f(r.roundTripsPerTurn, 1)} · ${f(r.probeNodeCpuMs, 2)}`,
        Object.entries(r.errors)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || '0',
        String(r.retries),
        String(r.acknowledgedMissing),
        String(r.transcriptDuplicates),
      ]),
    ),
  );
  console.log(
    table(
      [
        'store',
        'processes×users',
        'faults',
        'processes: apps · workers · killed · crashed',
        'connections (max)',
        'acked turns',
        'acked missing',
        'transcript duplicates',
        'never extracted',
        'extracted twice',
        'model asked twice',
        'drain s',
        'recovery s',
      ],
      rows.map((r) => [
        r.store,
        r.shape,
        r.faults.join(', ') || '—',
        `${r.processes.apps} · ${r.processes.workers} · ${r.processes.killed} · ${r.processes.crashed.length ? r.processes.crashed.join(', ') : '0'}`,
        r.maxConnections === undefined ? '—' : String(r.maxConnections),
        String(r.acknowledged),
        String(r.acknowledgedMissing),
        String(r.transcriptDuplicates),
        r.neverExtracted === undefined ? '—' : String(r.neverExtracted),
        r.extractedTwice === undefined ? '—' : String(r.extractedTwice),
        r.askedTwice === undefined ? '—' : String(r.askedTwice),
        f(r.drainS),
        f(r.recoveryS),
      ]),
    ),
  );
  for (const r of rows) {
    console.log(`\n${r.store} ${r.shape} turns/s, second by second: ${r.rates.join(' ')}`);
    console.log(
      r.samples.some((b) => b.pendingTurns !== undefined)
        ? `${r.store} ${r.shape} backlog (t s: sessions pending / turns to extract): ${r.samples
            .map((b) => `${b.t.toFixed(0)}: ${b.pendingSessions ?? '?'}/${b.pendingTurns ?? '?'}`)
            .join(' | ')}`
        : `${r.store} ${r.shape} sessions pending (t s: n; no workers, so every acknowledged turn waits): ${r.samples
            .map((b) => `${b.t.toFixed(0)}: ${b.pendingSessions ?? '?'}`)
            .join(' | ')}`,
    );
  }
  console.log(
    `\nfacts/user ${options.facts}, documents/user ${options.docs}, ${options.seconds} s timed after ${options.warmup} s warm-up, pool ${options.pool}/process${options.viaPgBouncer ? ` through PgBouncer (transaction mode, server_login_retry ${options.serverLoginRetry ?? 15} s)` : ''}${faults ? `, faults ${faults}` : ''}${options.workers ? `, ${options.workers} kioku workers (lease ${options.leaseTtl} s)` : ''}; machine: ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  if (args.includes('--json')) console.log(JSON.stringify({ bench: 'load', options, rows }));
}

if (!process.argv.includes('--child')) {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
