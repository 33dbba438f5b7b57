/**
 * Per-turn pipeline latency: `Conversation.prepare` + `Conversation.record` (everything but the model
 * call) with every memory feature on and the default budget, at several fact-store sizes, in memory and
 * in JSON files.
 *
 *   pnpm bench:turn [--sizes 1000,10000,100000] [--adapter memory|json|sqlite|postgres[,…]] [--turns 200]
 *                   [--warmup 1000] [--jit-warmup 20] [--workload full|chat] [--no-raw-bpe] [--json]
 *                   [--cpu-prof <dir>]
 *   pnpm bench:turn --telemetry [--sizes 1000] [--turns 300] [--warmup 300]   (OpenTelemetry's cost:
 *                   off, the SDK with a no-op exporter, and OTLP/HTTP to a local sink; `turn-telemetry.ts`)
 *
 * `--cpu-prof <dir>`: a V8 CPU profile of each configuration's timed turns (100 µs sampling), written to
 * `<dir>/<adapter>-<facts>.cpuprofile` (`cpu-profile.ts`); the profiler slows the turns it records.
 *
 * `--workload chat` (default size 1000): a chat app's turn — the every-fact block, working memory (10
 * entries) and the replay of the last 10 turns of a 200-turn thread, nothing else.
 * sqlite: `createSqliteStores` on a file in a temporary directory; postgres:
 * `createPostgresStores` in a fresh schema of `KIOKU_PG_URL` / `DATABASE_URL` (default
 * `postgres://postgres@127.0.0.1:5432/test`), dropped afterwards. On these three, after the timed turns, the
 * raw-driver floor of the same workload runs on the same database (`turn-floor.ts`: the turn's reads,
 * searches and writes as hand-written SQL) and is printed beside the turn with the ratio.
 *
 * First, not reported, `--jit-warmup` turns of the in-memory stores at 1,000 facts (JIT warm-up). V8 keeps
 * optimizing the pipeline's code for the first thousand turns or so, on its compiler threads, which `cpu`
 * counts as their mean per turn (`thread-cpu.ts`); a table shows each configuration's CPU on the main thread
 * and on the others (Linux), and the garbage the turns made (`heap-work.ts`). So each configuration warms
 * up for 1,000 turns of its own before it is timed (a server's steady state: on Node 20 the compiler
 * threads took 0.8–1.1 ms a turn after 30 turns, 0.2–0.3 after 1,000); a warm-up at another size than the
 * timed one slowed the timed turns (the code is optimized for that size's paths); see the README.
 * Per configuration: N facts in the user's scope (one `restore()` of a generated snapshot), 100
 * knowledge documents (full text), a session with a 200-turn transcript (conversation
 * replay), a plan with steps and context notes, working-memory entries in the session's namespace and
 * patrol findings. Then `--warmup` turns (each stores its exchange as a fact, as timed turns do: 1,000 more
 * facts at the start of timing), then `--turns` timed turns (a slow configuration stops warming
 * up after 10 s and timing after 60 s once 50 turns are in), each a different user message
 * (LoCoMo questions) answered by a canned assistant message and recorded, so the transcript, the
 * recalled-ids k-v and the `relevant` mode's stored interactions grow as in a real session.
 * Extra rows (skip: --no-raw-bpe): the in-memory stores with core's plain `o200kTokenizer` instead of the
 * default (which memoizes long texts), passed through the public `tokenizer` options, to show what repeated BPE
 * counting costs.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  type ChatMessage,
  conversationHistory,
  createInMemoryStores,
  type Fact,
  factMemory,
  KiokuBuilder,
  knowledgeDocuments,
  type MemoryFeature,
  type PromptMiddleware,
  planMode,
  type Tokenizer,
  toolOutputOffload,
  workingMemory,
} from '@kioku/core';
import { countMessagesTokens, o200kTokenizer } from '@kioku/core/model';
import {
  type DetailStore,
  type DocumentStore,
  type FactStore,
  InMemoryDetailStore,
  InMemoryDocumentStore,
  InMemoryFactStore,
  InMemoryPlanStore,
  InMemorySessionStore,
  InMemoryWorkingMemoryStore,
  type PlanStore,
  type SessionStore,
  type ThreadScope,
  type WorkingMemoryStore,
} from '@kioku/core/store';
import { type CpuProfileRecorder, startCpuProfile } from './cpu-profile.js';
import { type FactSeed, factSeeds, QUERIES } from './facts.js';
import { type HeapWork, type HeapWorkMeter, startHeapWork } from './heap-work.js';
import { loadLocomo, locomoPath } from './locomo.js';
import { CpuMeter, type CpuReading, perTurn, type ThreadCpu } from './thread-cpu.js';
import type { Floor, FloorTarget } from './turn-floor.js';
import { postgresFloor } from './turn-floor-postgres.js';
import { sqliteRecordsFloor } from './turn-floor-records.js';
import { benchTurnTelemetry } from './turn-telemetry.js';
import { cliArgs, flagValue, mean, percentile, round, sizesArg, table } from './util.js';

type Adapter = 'memory' | 'json' | 'sqlite' | 'postgres';
const ADAPTERS: readonly Adapter[] = ['memory', 'json', 'sqlite', 'postgres'];
type Workload = 'full' | 'chat';

interface Stores {
  facts: FactStore;
  documents: DocumentStore;
  plans: PlanStore;
  working: WorkingMemoryStore;
  sessions: SessionStore;
  details: DetailStore;
}

interface Row {
  adapter: Adapter;
  /** The plain, unmemoized `o200k_base` BPE (the extra rows) instead of the default tokenizer. */
  rawBpe: boolean;
  size: number;
  /** Turns timed (fewer than asked when the configuration is slow, see TIMED_MS). */
  timed: number;
  /** Facts at the end (the `relevant` mode stores every exchange). */
  factsAfter: number;
  setupMs: number;
  prepare: { p50: number; p95: number };
  record: { p50: number; p95: number };
  turn: { p50: number; p95: number };
  /** CPU time of the process per turn (user + system, all threads): what contention cannot inflate. */
  cpu: { p50: number; p95: number };
  promptTokens: number;
  /** Per middleware, inject + afterTurn of one turn. */
  middleware: Record<string, { p50: number; p95: number }>;
  /** Turn time outside the middlewares: transcript append, the runner's token counting. */
  rest: { p50: number; p95: number };
  /** One count of a whole prepared prompt with o200k_base (the runner counts what it injects twice). */
  promptCountMs: number;
  /** The same turn's reads, searches and writes as raw driver SQL (sqlite, postgres). */
  floor?: Floor;
  /** CPU per turn on the main thread and on the others (V8's compiler and GC helpers), Linux only. */
  threads?: ThreadCpu;
  /** Bytes allocated per turn and the collections they caused. */
  heap?: HeapWork;
}

const SCOPE = { userId: 'bench-user' };
const DOCUMENTS = 100;
const SENTENCES_PER_DOCUMENT = 30;
const TRANSCRIPT_TURNS = 200;
const WARMUP_MS = 10_000;
const TIMED_MS = 60_000;
const MIN_TIMED = 50;
/** Turns the chat workload replays (the full workload: the feature's default, 20). */
const CHAT_TURNS = 10;
const REPLAY_TURNS = 20;
/** Search limits of the features' defaults: recall's `maxResults`, relevant's 4 × `maxMemories`. */
const RECALL_LIMIT = 8;
const RELEVANT_LIMIT = 20;
/** Transcript entries the replay reads for `turns` turns (`ReplayWindow` at two entries a turn). */
const replayWindow = (turns: number) => Math.ceil((turns + 1) * 2 * 1.25) + 4;
/** Middleware names in registration order (the ledger's names). */
const MIDDLEWARES = [
  'facts',
  'knowledge',
  'plan',
  'fact-recall',
  'working-memory',
  'relevant-memory',
  'conversation',
] as const;
const SHORT: Record<string, string> = {
  facts: 'facts',
  knowledge: 'knowledge',
  plan: 'plan',
  'fact-recall': 'recall',
  'working-memory': 'working',
  'relevant-memory': 'relevant',
  conversation: 'replay',
};

function parseArgs() {
  const args = cliArgs();
  const adapter = flagValue(args, '--adapter');
  const adapters = (adapter ?? 'memory,json').split(',') as Adapter[];
  for (const a of adapters) {
    if (!ADAPTERS.includes(a)) throw new Error(`--adapter takes ${ADAPTERS.join(', ')} (comma-separated)`);
  }
  const workload = (flagValue(args, '--workload') ?? 'full') as Workload;
  if (workload !== 'full' && workload !== 'chat') throw new Error('--workload is full or chat');
  const int = (flag: string, fallback: number) => {
    const n = Number(flagValue(args, flag) ?? fallback);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} takes a non-negative integer`);
    return n;
  };
  return {
    json: args.includes('--json'),
    sizes: sizesArg(args, workload === 'chat' ? '1000' : '1000,10000,100000'),
    adapters,
    workload,
    turns: Math.max(1, int('--turns', 200)),
    warmup: int('--warmup', 1000),
    jitWarmup: int('--jit-warmup', 20),
    rawBpe: !args.includes('--no-raw-bpe'),
    cpuProfileDir: flagValue(args, '--cpu-prof'),
  };
}

/** Varied user messages (LoCoMo's questions) and chat lines (its dialog turns), or built-in text. */
function texts(seeds: readonly FactSeed[]): { questions: string[]; lines: string[] } {
  if (!existsSync(locomoPath())) {
    return { questions: [...QUERIES], lines: seeds.slice(0, 2000).map((s) => s.content) };
  }
  const conversations = loadLocomo();
  return {
    questions: conversations.flatMap((c) => c.questions.map((q) => q.question)),
    lines: conversations.flatMap((c) => c.units.map((u) => u.text)),
  };
}

async function loadJsonStores(): Promise<((directory: string) => Stores) | string> {
  try {
    const mod = (await import('@kioku/store-json')) as {
      createJsonStores?: (options: { directory: string; tokenizer?: Tokenizer }) => Stores;
    };
    const create = mod.createJsonStores;
    return create ? (directory) => create({ directory }) : 'createJsonStores is not exported';
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'import failed';
  }
}

interface OpenedStores {
  stores: Stores;
  close(): Promise<void>;
  /** The raw-driver floor of a turn on these stores' database (SQL adapters). */
  floor?: (target: FloorTarget, turns: number) => Promise<Floor>;
}

/** Where the PostgreSQL rows run: a fresh schema in this database (dropped afterwards). */
function postgresUrl(): string {
  return process.env.KIOKU_PG_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

/** Fresh, empty stores of one adapter, or why they cannot be had. */
async function openStores(adapter: Adapter): Promise<OpenedStores | string> {
  if (adapter === 'memory') return { stores: memoryStores(), close: async () => {} };
  if (adapter === 'json') {
    const json = await loadJsonStores();
    if (typeof json === 'string') return json;
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-turn-'));
    return { stores: json(directory), close: () => rm(directory, { recursive: true, force: true }) };
  }
  try {
    if (adapter === 'sqlite') {
      const { createSqliteStores } = await import('@kioku/store-sqlite');
      const directory = await mkdtemp(path.join(os.tmpdir(), 'kioku-bench-turn-'));
      const file = path.join(directory, 'kioku.db');
      const stores = createSqliteStores({ file });
      await stores.setup();
      return {
        stores,
        floor: (target, turns) => sqliteRecordsFloor(file, target, turns),
        close: async () => {
          await stores.close();
          await rm(directory, { recursive: true, force: true });
        },
      };
    }
    const { createPostgresStores } = await import('@kioku/store-postgres');
    const postgres = (await import('postgres')).default;
    const schema = `bench_turn_${randomBytes(4).toString('hex')}`;
    const stores = createPostgresStores({
      url: postgresUrl(),
      schema,
      clientOptions: { max: 4, onnotice: () => {}, connect_timeout: 5 },
    });
    await stores.setup();
    return {
      stores,
      floor: (target, turns) => postgresFloor(postgres, postgresUrl(), schema, target, turns),
      close: async () => {
        await stores.close();
        const admin = postgres(postgresUrl(), { max: 1, onnotice: () => {} });
        await admin.unsafe(`drop schema if exists "${schema}" cascade`).catch(() => {});
        await admin.end({ timeout: 5 });
      },
    };
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'cannot open the stores';
  }
}

function memoryStores(tokenizer?: Tokenizer): Stores {
  return {
    facts: new InMemoryFactStore(),
    documents: new InMemoryDocumentStore(tokenizer ? { tokenizer } : {}),
    plans: new InMemoryPlanStore(),
    working: new InMemoryWorkingMemoryStore(),
    sessions: new InMemorySessionStore(),
    details: new InMemoryDetailStore(tokenizer ? { tokenizer } : {}),
  };
}

/** N facts as one snapshot (timestamps one second apart, so "newest updated first" has an order). */
function factSnapshot(seeds: readonly FactSeed[], size: number) {
  const base = Date.now() - size * 1000;
  const records: Fact[] = [];
  for (let i = 0; i < size; i++) {
    const at = new Date(base + i * 1000).toISOString();
    const seed = seeds[i]!;
    records.push({
      id: `f${i}`,
      userId: SCOPE.userId,
      content: seed.content,
      category: seed.category,
      tags: seed.tags,
      metadata: {},
      provenance: { source: 'import' },
      createdAt: at,
      updatedAt: at,
      version: 1,
    });
  }
  return {
    format: 'kioku.snapshot',
    schemaVersion: 1,
    kind: 'facts',
    createdAt: new Date().toISOString(),
    selector: { userId: SCOPE.userId },
    records,
  };
}

/** Wraps a feature's middleware so each inject/afterTurn adds its time to `sink[name]`. */
function timed(feature: MemoryFeature, sink: Map<string, number>): MemoryFeature {
  const mw = feature.middleware;
  if (!mw) return feature;
  const add = (start: number) => sink.set(mw.name, (sink.get(mw.name) ?? 0) + performance.now() - start);
  const afterTurn = mw.afterTurn;
  const wrapped: PromptMiddleware = {
    name: mw.name,
    placement: mw.placement,
    async inject(ctx) {
      const start = performance.now();
      try {
        return await mw.inject(ctx);
      } finally {
        add(start);
      }
    },
    ...(afterTurn
      ? {
          async afterTurn(ctx) {
            const start = performance.now();
            try {
              await afterTurn.call(mw, ctx);
            } finally {
              add(start);
            }
          },
        }
      : {}),
  };
  return { ...feature, middleware: wrapped };
}

function quantiles(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50), 2), p95: round(percentile(sorted, 95), 2) };
}

/** The thread's plan: a goal, six steps (one done, one under way) and three context notes. */
async function setUpPlan(plans: PlanStore, scope: ThreadScope): Promise<void> {
  await plans.create(scope, {
    goal: 'Organise the family trip to Lisbon in June',
    steps: [
      'Collect everyone’s available dates',
      'Compare flight options and prices',
      'Book flights',
      'Shortlist three apartments near Alfama',
      'Book the apartment',
      'Plan day trips (Sintra, Cascais)',
    ],
  });
  await plans.updateStep(scope, '1', { status: 'completed', notes: 'June 10–20 works for all four' });
  await plans.updateStep(scope, '2', { status: 'in_progress', notes: 'TAP and easyJet so far' });
  for (const note of [
    'Budget is about 3,000 EUR in total',
    'Grandma needs a ground-floor apartment or a lift',
    'Kids want a beach day',
  ]) {
    await plans.addContextNote(scope, note);
  }
}

async function benchConfig(
  adapter: Adapter,
  stores: Stores,
  size: number,
  seeds: readonly FactSeed[],
  text: { questions: string[]; lines: string[] },
  options: {
    turns: number;
    warmup: number;
    workload: Workload;
    tokenizer?: Tokenizer;
    floor?: OpenedStores['floor'];
    cpuProfileDir?: string | undefined;
  },
): Promise<Row> {
  const t0 = performance.now();
  const full = options.workload === 'full';
  await stores.facts.restore(factSnapshot(seeds, size));
  for (let d = 0; d < (full ? DOCUMENTS : 0); d++) {
    const from = (d * SENTENCES_PER_DOCUMENT) % Math.max(1, seeds.length - SENTENCES_PER_DOCUMENT);
    const body = seeds.slice(from, from + SENTENCES_PER_DOCUMENT).map((s) => s.content);
    await stores.documents.create(SCOPE, {
      title: `Handbook ${d + 1}: ${seeds[from]!.category}`,
      text: [body.slice(0, 10).join(' '), body.slice(10, 20).join(' '), body.slice(20).join(' ')].join(
        '\n\n',
      ),
      tags: [seeds[from]!.category.split('/')[0]!],
    });
  }

  const sink = new Map<string, number>();
  const features: MemoryFeature[] = full
    ? [
        factMemory({ facts: stores.facts }),
        knowledgeDocuments({ store: stores.documents }),
        planMode({ store: stores.plans }),
        factMemory({ mode: 'recall', facts: stores.facts, sessions: stores.sessions }),
        workingMemory({ store: stores.working }),
        factMemory({ mode: 'relevant', facts: stores.facts, details: stores.details }),
        conversationHistory({ sessions: stores.sessions }),
        toolOutputOffload({ details: stores.details }),
      ]
    : [
        factMemory({ facts: stores.facts }),
        workingMemory({ store: stores.working }),
        conversationHistory({ sessions: stores.sessions, maxTurns: CHAT_TURNS }),
      ];
  const builder = new KiokuBuilder({
    stores: { ...createInMemoryStores(), sessions: stores.sessions },
    systemPrompt: 'You are a helpful assistant.',
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
  });
  for (const feature of features) builder.use(timed(feature, sink));
  const conversation = await builder.build().startConversation(SCOPE);
  const scope = conversation.scope;

  // A 200-turn transcript, appended in one call (one write).
  const { lines } = text;
  const history: ChatMessage[] = [];
  for (let t = 0; t < TRANSCRIPT_TURNS; t++) {
    history.push({ role: 'user', content: lines[(2 * t) % lines.length]! });
    history.push({ role: 'assistant', content: lines[(2 * t + 1) % lines.length]! });
  }
  await stores.sessions.transcriptAppend(scope, conversation.sessionId, history);

  if (full) await setUpPlan(stores.plans, scope);

  const hour = 60 * 60 * 1000;
  for (let w = 0; w < 10; w++) {
    await stores.working.set(scope, `session/${conversation.sessionId}/scratch/item-${w}`, lines[w]!, {
      ttlMs: hour,
      category: w % 2 ? 'research' : 'drafts',
      tags: ['trip'],
    });
  }
  for (let w = 0; w < (full ? 5 : 0); w++) {
    await stores.working.set(scope, `patrol/heartbeat/finding-${w}`, lines[100 + w]!, {
      ttlMs: hour,
      category: 'patrol',
      tags: ['inbox'],
    });
  }
  const setupMs = performance.now() - t0;

  const prepareTimes: number[] = [];
  const recordTimes: number[] = [];
  const turnTimes: number[] = [];
  const cpuTimes: number[] = [];
  const tokens: number[] = [];
  const perMiddleware = new Map<string, number[]>(MIDDLEWARES.map((m) => [m, []]));
  const rest: number[] = [];
  const { questions } = text;
  let lastPrompt: ChatMessage[] = [];
  let blockFacts = 0;
  // Slow configurations (JSON at 100k facts: ~1 s a turn) stop early so that the whole bench stays
  // within a few minutes: warm-up ends after WARMUP_MS, timing after TIMED_MS with MIN_TIMED turns.
  const warmupEnds = performance.now() + WARMUP_MS;
  let warmed = 0;
  let timedEnds = Number.POSITIVE_INFINITY;
  // The main thread's CPU per turn (exact), the helper threads' over the timed turns (see thread-cpu.ts).
  const meter = new CpuMeter();
  const mainCpu: number[] = [];
  let threadsBefore: CpuReading | undefined;
  let heapMeter: HeapWorkMeter | undefined;
  let profiler: CpuProfileRecorder | undefined;
  for (let k = 0; ; k++) {
    const warming = warmed < options.warmup && performance.now() < warmupEnds;
    if (!warming) {
      if (timedEnds === Number.POSITIVE_INFINITY) {
        if (options.cpuProfileDir) {
          const name = `${options.tokenizer ? `${adapter}+raw-bpe` : adapter}-${size}`;
          profiler = await startCpuProfile(options.cpuProfileDir, name);
        }
        timedEnds = performance.now() + TIMED_MS;
        threadsBefore = meter.read('before');
        heapMeter = startHeapWork();
      }
      const n = turnTimes.length;
      if (n >= options.turns || (n >= Math.min(MIN_TIMED, options.turns) && performance.now() > timedEnds))
        break;
    }
    const message = questions[(k * 7 + size) % questions.length]!;
    const answer = lines[(k * 13 + 5) % lines.length]!;
    sink.clear();
    // Not during warm-up: only the timed turns' readings are used.
    const threadsStart = warming ? undefined : meter.read('before');
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    const prepared = await conversation.prepare(message);
    const mid = performance.now();
    lastPrompt = prepared.messages;
    blockFacts = prepared.ledger.entries.find((e) => e.middleware === 'facts')?.included ?? 0;
    await conversation.record([
      { role: 'user', content: message },
      { role: 'assistant', content: answer },
    ]);
    const end = performance.now();
    const cpu = process.cpuUsage(cpuStart);
    const threadsEnd = warming ? undefined : meter.read('after');
    if (warming) {
      warmed++;
      continue;
    }
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    if (threadsStart && threadsEnd) mainCpu.push(threadsEnd.mainMs - threadsStart.mainMs);
    prepareTimes.push(mid - start);
    recordTimes.push(end - mid);
    turnTimes.push(end - start);
    tokens.push(prepared.ledger.totalTokens);
    let inMiddlewares = 0;
    for (const name of MIDDLEWARES) {
      const ms = sink.get(name) ?? 0;
      perMiddleware.get(name)!.push(ms);
      inMiddlewares += ms;
    }
    rest.push(end - start - inMiddlewares);
  }

  const threads = perTurn(threadsBefore, meter.read('after'), turnTimes.length);
  meter.close();
  // Where the threads can be told apart: the main thread's CPU of each turn plus the helpers' mean per turn.
  const turnCpu =
    threads && mainCpu.length === turnTimes.length ? mainCpu.map((m) => m + threads.otherMs) : cpuTimes;
  const heap = heapMeter?.stop(turnTimes.length);
  if (profiler) console.error(`  CPU profile of the timed turns: ${await profiler.stop()}`);

  // The raw floor after the timed turns, on the same data (it appends its own exchanges and, in the full
  // workload, stores its own facts, as turns do), with the messages that would have come next.
  const next = turnTimes.length + warmed;
  const floor = options.floor
    ? await options.floor(
        {
          workload: options.workload,
          userId: SCOPE.userId,
          sessionId: conversation.sessionId,
          threadId: scope.threadId ?? conversation.sessionId,
          window: replayWindow(full ? REPLAY_TURNS : CHAT_TURNS),
          cap: 500,
          blockFacts,
          recallLimit: RECALL_LIMIT,
          relevantLimit: RELEVANT_LIMIT,
          message: (k) => questions[((next + k) * 7 + size) % questions.length]!,
          answer: (k) => lines[((next + k) * 13 + 5) % lines.length]!,
        },
        Math.max(turnTimes.length, 50),
      )
    : undefined;

  const countTimes: number[] = [];
  for (let r = 0; r < 11; r++) {
    const start = performance.now();
    countMessagesTokens(o200kTokenizer, lastPrompt);
    countTimes.push(performance.now() - start);
  }

  return {
    adapter,
    rawBpe: options.tokenizer !== undefined,
    size,
    timed: turnTimes.length,
    factsAfter: (await stores.facts.categories(SCOPE)).reduce((n, c) => n + c.count, 0),
    setupMs: round(setupMs, 0),
    prepare: quantiles(prepareTimes),
    record: quantiles(recordTimes),
    turn: quantiles(turnTimes),
    cpu: quantiles(turnCpu),
    promptTokens: round(mean(tokens), 0),
    middleware: Object.fromEntries([...perMiddleware].map(([name, times]) => [name, quantiles(times)])),
    rest: quantiles(rest),
    promptCountMs: quantiles(countTimes).p50,
    ...(floor ? { floor } : {}),
    ...(threads ? { threads } : {}),
    ...(heap ? { heap } : {}),
  };
}

const label = (r: Row) => (r.rawBpe ? `${r.adapter}+raw-bpe` : r.adapter);

function slowest(row: Row): string {
  const [name, q] = Object.entries(row.middleware).sort((a, b) => b[1].p95 - a[1].p95)[0]!;
  return `${SHORT[name] ?? name} ${q.p95.toFixed(2)}`;
}

async function main(): Promise<void> {
  const options = parseArgs();
  const seeds = factSeeds(Math.max(...options.sizes, DOCUMENTS * SENTENCES_PER_DOCUMENT));
  const text = texts(seeds);
  const rows: Row[] = [];
  const unavailable: Record<string, string> = {};
  const startedAt = performance.now();
  // JIT warm-up on a small in-memory configuration, not reported (see the header).
  await benchConfig('memory', memoryStores(), Math.min(1000, Math.max(...options.sizes)), seeds, text, {
    turns: 50,
    warmup: options.jitWarmup,
    workload: options.workload,
  });
  for (const adapter of options.adapters) {
    for (const size of options.sizes) {
      const opened = await openStores(adapter);
      if (typeof opened === 'string') {
        unavailable[adapter] = `not available (${opened})`;
        break;
      }
      try {
        rows.push(
          await benchConfig(adapter, opened.stores, size, seeds, text, {
            ...options,
            ...(opened.floor ? { floor: opened.floor } : {}),
          }),
        );
      } finally {
        await opened.close();
      }
      if (!options.json) console.error(`  ${adapter} ${size} done`);
    }
  }
  if (options.rawBpe && options.adapters.includes('memory')) {
    for (const size of options.sizes) {
      const tokenizer = o200kTokenizer;
      rows.push(
        await benchConfig('memory', memoryStores(tokenizer), size, seeds, text, { ...options, tokenizer }),
      );
      if (!options.json) console.error(`  memory+raw-bpe ${size} done`);
    }
  }
  const runtimeS = round((performance.now() - startedAt) / 1000, 0);

  const ms = (v: number) => v.toFixed(2);
  console.log(
    [
      options.workload === 'full'
        ? `Turn pipeline bench: prepare + record per turn (no model call), all features on, default budget (16,000 tokens)\n${DOCUMENTS} documents (full text), ${TRANSCRIPT_TURNS}-turn transcript, a plan, 10 working-memory entries + 5 patrol findings;`
        : `Turn pipeline bench, chat workload: prepare + record per turn (no model call), default budget (16,000 tokens)\nevery-fact block, working memory (10 entries), replay of the last 10 turns of a ${TRANSCRIPT_TURNS}-turn thread;`,
      `${options.warmup} warm-up + ${options.turns} timed turns per configuration (fewer when slow: warm-up ≤ ${WARMUP_MS / 1000} s, timing ≤ ${TIMED_MS / 1000} s once ${MIN_TIMED} turns are in), each a different user message`,
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${runtimeS} s`,
      '',
      'ms per turn: prep = prepare, rec = record, turn = both (wall clock); cpu = the CPU time of the turn’s',
      'thread plus the helper threads’ mean per turn (Linux; elsewhere the process’s CPU per turn), which other',
      'load on the machine does not inflate; tokens = mean prompt tokens.',
      table(
        [
          'adapter',
          'facts',
          'turns',
          'prep p50',
          'prep p95',
          'rec p50',
          'rec p95',
          'turn p50',
          'turn p95',
          'cpu p50',
          'cpu p95',
          'tokens',
          'slowest (p95 ms)',
          'setup ms',
        ],
        rows.map((r) => [
          label(r),
          r.size,
          r.timed,
          ms(r.prepare.p50),
          ms(r.prepare.p95),
          ms(r.record.p50),
          ms(r.record.p95),
          ms(r.turn.p50),
          ms(r.turn.p95),
          ms(r.cpu.p50),
          ms(r.cpu.p95),
          r.promptTokens,
          slowest(r),
          r.setupMs,
        ]),
      ),
      ...Object.entries(unavailable).map(([a, why]) => `${a}: ${why}`),
      ...(rows.some((r) => r.threads)
        ? [
            '',
            'CPU per turn by thread over the timed turns (mean ms; "other": V8’s compiler and GC helper threads,',
            'which cpu above counts too), and the garbage the turns made: KB allocated per turn (machine load does',
            'not change it), young-generation collections per 100 turns, full collections, GC ms per turn:',
            table(
              ['adapter', 'facts', 'main thread', 'other threads', 'alloc KB', 'minor/100', 'major', 'gc ms'],
              rows
                .filter((r) => r.threads)
                .map((r) => [
                  label(r),
                  r.size,
                  ms(r.threads!.mainMs),
                  ms(r.threads!.otherMs),
                  r.heap ? r.heap.allocatedKb.toFixed(0) : '-',
                  r.heap ? r.heap.minorPer100.toFixed(1) : '-',
                  r.heap ? r.heap.major : '-',
                  r.heap ? ms(r.heap.gcMs) : '-',
                ]),
            ),
          ]
        : []),
      ...(rows.some((r) => r.floor)
        ? [
            '',
            'Raw-driver floor: the turn’s reads, searches and writes as hand-written SQL through the driver, on the',
            options.workload === 'chat'
              ? 'same database (fact count + newest fact, two working-memory inventories, the transcript tail, one exchange appended).'
              : 'same database (fact count + the facts the block showed, documents, plan, recalled ids, two ranked fact searches\n' +
                '(limits 8 and 20) and a detail search, two working-memory inventories, the transcript tail; one exchange appended,\n' +
                'the recalled ids written, the exchange stored as a fact). See src/turn-floor.ts.',
            table(
              [
                'adapter',
                'facts',
                'turn p50',
                'turn p95',
                'floor p50',
                'floor p95',
                '× floor p50',
                '× floor p95',
                'reads p50',
                'searches p50',
                'writes p50',
              ],
              rows
                .filter((r) => r.floor)
                .map((r) => [
                  label(r),
                  r.size,
                  ms(r.turn.p50),
                  ms(r.turn.p95),
                  ms(r.floor!.p50),
                  ms(r.floor!.p95),
                  (r.turn.p50 / r.floor!.p50).toFixed(1),
                  (r.turn.p95 / r.floor!.p95).toFixed(1),
                  ms(r.floor!.parts.reads.p50),
                  ms(r.floor!.parts.searches.p50),
                  ms(r.floor!.parts.writes.p50),
                ]),
            ),
          ]
        : []),
      '',
      'Per middleware, inject + afterTurn, p95 ms. "rest": the turn outside the middlewares (transcript',
      'append, the runner’s token counting); "count prompt": one o200k_base count of a whole prepared prompt.',
      table(
        ['adapter', 'facts', ...MIDDLEWARES.map((m) => SHORT[m]!), 'rest', 'count prompt'],
        rows.map((r) => [
          label(r),
          r.size,
          ...MIDDLEWARES.map((m) => ms(r.middleware[m]!.p95)),
          ms(r.rest.p95),
          ms(r.promptCountMs),
        ]),
      ),
    ].join('\n'),
  );

  if (options.json) {
    const by = (pick: (r: Row) => unknown) => {
      const out: Record<string, Record<string, unknown>> = {};
      for (const r of rows) out[label(r)] = { ...out[label(r)], [String(r.size)]: pick(r) };
      return out;
    };
    const memory10k = rows.find((r) => label(r) === 'memory' && r.size === 10_000);
    console.log(
      JSON.stringify({
        bench: 'turn',
        workload: options.workload,
        turns: options.turns,
        warmup: options.warmup,
        turns_timed: by((r) => r.timed),
        turn_p50_ms: by((r) => r.turn.p50),
        turn_p95_ms: by((r) => r.turn.p95),
        turn_cpu_p50_ms: by((r) => r.cpu.p50),
        turn_cpu_p95_ms: by((r) => r.cpu.p95),
        prepare_p50_ms: by((r) => r.prepare.p50),
        prepare_p95_ms: by((r) => r.prepare.p95),
        record_p50_ms: by((r) => r.record.p50),
        record_p95_ms: by((r) => r.record.p95),
        prompt_tokens: by((r) => r.promptTokens),
        middleware_p95_ms: by((r) =>
          Object.fromEntries([...MIDDLEWARES.map((m) => [m, r.middleware[m]!.p95]), ['rest', r.rest.p95]]),
        ),
        setup_ms: by((r) => r.setupMs),
        prompt_count_ms: by((r) => r.promptCountMs),
        floor_p50_ms: by((r) => r.floor?.p50 ?? null),
        floor_p95_ms: by((r) => r.floor?.p95 ?? null),
        cpu_main_thread_ms: by((r) => r.threads?.mainMs ?? null),
        cpu_other_threads_ms: by((r) => r.threads?.otherMs ?? null),
        allocated_kb_per_turn: by((r) => (r.heap ? round(r.heap.allocatedKb, 1) : null)),
        minor_gcs_per_100_turns: by((r) => r.heap?.minorPer100 ?? null),
        major_gcs: by((r) => r.heap?.major ?? null),
        gc_ms_per_turn: by((r) => (r.heap ? round(r.heap.gcMs, 3) : null)),
        floor_parts_p50_ms: by((r) =>
          r.floor
            ? Object.fromEntries(Object.entries(r.floor.parts).map(([part, q]) => [part, q.p50]))
            : null,
        ),
        ...(memory10k
          ? {
              target: {
                memory_10k_turn_p95_ms: memory10k.turn.p95,
                memory_10k_turn_cpu_p95_ms: memory10k.cpu.p95,
                under_10ms: memory10k.turn.p95 < 10,
              },
            }
          : {}),
        ...(Object.keys(unavailable).length ? { unavailable } : {}),
        runtime_s: runtimeS,
      }),
    );
  }
}

// `--telemetry`: the OpenTelemetry rows (off, SDK with a no-op exporter, SDK with OTLP to a local sink).
if (cliArgs().includes('--telemetry')) await benchTurnTelemetry();
else await main();
