/**
 * `pnpm bench:frameworks [--items N] [--queries Q] [--users U] [--turns T] [--json]`, in a database of its
 * own created on the server and dropped afterwards. Two parts.
 *
 * Per-turn memory cost (`memory-turn.ts`: U users × T turns, facts told in one thread, asked about in
 * the next; a turn recalls context for the message then records the exchange), each turn run on every side
 * in turn: a Mastra `Agent` with the AI SDK's mock model — without memory (the agent's own cost), with
 * Mastra's Memory on `@mastra/pg` (thread history, resource working memory; semantic recall off: it needs
 * an embedder and PgVector), with `@kioku/mastra` on store-postgres — and Kioku's prepare + record without a
 * framework; LangGraph's long-term memory turn (search the user's namespace, put the exchange) on
 * PostgresStore and on KiokuStore. Statements and syncs per turn are counted through a proxy
 * (`pg-wire-count.ts`) on sides of their own.
 *
 * Then LangGraph's `BaseStore` operations side by
 * side on PostgreSQL — LangGraph's own `PostgresStore` (`@langchain/langgraph-checkpoint-postgres`) and
 * `@kioku/langgraph`'s `KiokuStore` over `@kioku/store-postgres` — in one invocation, each in a schema
 * of its own, the same workload, each operation run on one then the other: N puts of one user's memories, then Q gets, Q searches with a
 * query, Q searches with a filter and Q/10 namespace listings. The table shows per-operation mean and p95
 * (ms), the hits a query returned on average, and Kioku ÷ LangGraph (< 1: Kioku faster). Each store
 * searches as it does by default: PostgresStore without an embedding index matches with PostgreSQL full
 * text (`plainto_tsquery`: every word of the query) or ILIKE, KiokuStore with Kioku's recall (ranked,
 * any word). `--json` prints the same as one JSON object last. PostgreSQL: `KIOKU_PG_URL`, default
 * `postgres://postgres@127.0.0.1:5432/postgres`.
 */
import { randomBytes } from 'node:crypto';
import { KiokuStore } from '@kioku/langgraph';
import { createPostgresStores } from '@kioku/store-postgres';
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import postgres from 'postgres';
import {
  kiokuPrepareRecordSide,
  langgraphStoreSide,
  type MemoryTurnSide,
  mastraAgentSide,
  memoryTurnWorkload,
} from './memory-turn.js';
import { countTurns, type TurnWire, timeTurns } from './memory-turn-run.js';
import { startWireCounter } from './pg-wire-count.js';
import { cliArgs, flagValue, mean, percentile, round, seededRandom, table } from './util.js';

const SERVER_URL = process.env.KIOKU_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const OPS = ['put', 'get', 'search (query)', 'search (filter)', 'listNamespaces'] as const;
type Op = (typeof OPS)[number];

const SUBJECTS = ['Alice', 'My sister', 'The team', 'Our landlord', 'My doctor', 'The neighbour', 'Grandpa'];
const VERBS = ['prefers', 'dislikes', 'recommended', 'booked', 'mentioned', 'is allergic to', 'collects'];
const OBJECTS = [
  'green tea',
  'hiking in the Alps',
  'vintage cameras',
  'the dentist on Friday',
  'spicy ramen',
  'jazz records',
  'a trip to Lisbon',
  'peanuts',
  'morning runs',
  'the quarterly report',
  'sourdough bread',
  'chess openings',
];
const KINDS = ['preference', 'event', 'health', 'work'];

interface Memory {
  key: string;
  namespace: string[];
  value: { text: string; kind: string };
}

function workload(items: number, queries: number) {
  const random = seededRandom(44);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const memories: Memory[] = Array.from({ length: items }, (_, i) => ({
    key: `m${i}`,
    namespace: ['memories', pick(['profile', 'events', 'work'])],
    value: { text: `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} (note ${i})`, kind: pick(KINDS) },
  }));
  const keys = Array.from({ length: queries }, () => pick(memories));
  // Questions a user asks: one or two of the objects' words, as a model would pass them.
  const questions = Array.from({ length: queries }, () => {
    const words = pick(OBJECTS).split(' ');
    return `what about ${words.slice(-2).join(' ')}?`;
  });
  const kinds = Array.from({ length: queries }, () => pick(KINDS));
  return { memories, keys, questions, kinds };
}

type Timings = Record<Op, number[]>;

async function timed<T>(list: number[], run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  list.push(performance.now() - start);
  return result;
}

function emptyTimings(): Timings {
  return { put: [], get: [], 'search (query)': [], 'search (filter)': [], listNamespaces: [] };
}

/**
 * The workload on both stores, one operation at a time in turns (LangGraph's, then Kioku's, the same
 * operation), so load from elsewhere on the machine falls on both alike.
 */
async function runWorkload(
  stores: { langgraph: BaseStore; kioku: BaseStore },
  w: ReturnType<typeof workload>,
) {
  const times = { langgraph: emptyTimings(), kioku: emptyTimings() };
  const hits = { langgraph: 0, kioku: 0 };
  const sides = ['langgraph', 'kioku'] as const;
  const both = async (op: Op, run: (store: BaseStore) => Promise<unknown>) => {
    for (const side of sides) {
      const result = await timed(times[side][op], () => run(stores[side]));
      if (op === 'search (query)') hits[side] += (result as unknown[]).length;
    }
  };
  for (const m of w.memories) await both('put', (s) => s.put(m.namespace, m.key, m.value));
  for (const m of w.keys) await both('get', (s) => s.get(m.namespace, m.key));
  for (const q of w.questions)
    await both('search (query)', (s) => s.search(['memories'], { query: q, limit: 10 }));
  for (const kind of w.kinds) {
    await both('search (filter)', (s) => s.search(['memories'], { filter: { kind }, limit: 10 }));
  }
  for (let i = 0; i < Math.max(1, w.questions.length / 10); i++) {
    await both('listNamespaces', (s) => s.listNamespaces({ prefix: ['memories'] }));
  }
  const per = w.questions.length;
  return {
    langgraph: { times: times.langgraph, hitsPerQuery: hits.langgraph / per },
    kioku: { times: times.kioku, hitsPerQuery: hits.kioku / per },
  };
}

function summary(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  return { mean: round(mean(times), 3), p95: round(percentile(sorted, 95), 3) };
}

interface SideSpec {
  label: string;
  /** A Mastra agent turn (its memory's cost is the turn less the agent's without memory). */
  agent?: boolean;
  make: (url: string) => Promise<MemoryTurnSide>;
}

const MASTRA_SIDES: SideSpec[] = [
  { label: 'Mastra Agent, no memory', make: (url) => mastraAgentSide('none', url, 'none'), agent: true },
  {
    label: 'Mastra Agent + Mastra Memory (@mastra/pg)',
    make: (url) => mastraAgentSide('mastra', url, 'mastra'),
    agent: true,
  },
  {
    label: 'Mastra Agent + KiokuMastraMemory',
    make: (url) => mastraAgentSide('kioku', url, 'kioku_mastra'),
    agent: true,
  },
  {
    label: 'Kioku prepare + record (no framework)',
    make: (url) => kiokuPrepareRecordSide(url, 'kioku_turn'),
  },
];
const LANGGRAPH_SIDES: SideSpec[] = [
  {
    label: 'LangGraph PostgresStore search + put',
    make: (url) => langgraphStoreSide('langgraph', url, 'lg_turn'),
  },
  { label: 'KiokuStore search + put', make: (url) => langgraphStoreSide('kioku', url, 'kioku_lg_turn') },
];

/** One group of sides: timed turns on sides of the database's URL, counted turns through the proxy. */
async function turnGroup(specs: SideSpec[], url: string, users: number, turnsPerUser: number) {
  const sides = [];
  for (const spec of specs) sides.push(await spec.make(url));
  const warm = memoryTurnWorkload({
    users: Math.max(2, Math.round(users / 4)),
    turns: turnsPerUser,
    prefix: 'warm',
  });
  const turns = memoryTurnWorkload({ users, turns: turnsPerUser });
  let times: Awaited<ReturnType<typeof timeTurns>>;
  try {
    times = await timeTurns(sides, [...warm, ...turns], warm.length);
  } finally {
    for (const side of sides) await side.close();
  }
  const counter = await startWireCounter(url);
  const wire: TurnWire[] = [];
  try {
    const counted = memoryTurnWorkload({ users: 3, turns: turnsPerUser, prefix: 'counted' });
    for (const spec of specs) {
      const side = await spec.make(counter.url(url));
      try {
        wire.push(await countTurns(side, counted, counter, 3));
      } finally {
        await side.close();
      }
    }
  } finally {
    await counter.close();
  }
  return specs.map((spec, i) => ({
    side: spec.label,
    agent: spec.agent === true,
    ...times[i]!,
    ...wire[i]!,
  }));
}

/**
 * The group's rows with ratio = mean ÷ the `base` row's mean and, when a `none` row is given (the agent
 * without memory), the memory's own cost: mean − that row's mean, and its ratio to the base's.
 */
function withRatios(rows: Awaited<ReturnType<typeof turnGroup>>, base: number, none?: number) {
  const floor = none === undefined ? 0 : rows[none]!.mean;
  const cost = (r: (typeof rows)[number]) => (r.agent ? r.mean - floor : r.mean);
  return rows.map(({ agent: _, ...r }, i) => ({
    ...r,
    ratio: round(r.mean / rows[base]!.mean, 2),
    ...(none === undefined || i === none
      ? {}
      : {
          memoryCost: round(cost(rows[i]!), 3),
          memoryCostRatio: round(cost(rows[i]!) / cost(rows[base]!), 2),
        }),
  }));
}

function printTurnGroup(title: string, rows: ReturnType<typeof withRatios>) {
  const cost = rows.some((r) => r.memoryCost !== undefined);
  console.log(`${title}\n`);
  console.log(
    table(
      [
        'side',
        'mean',
        'p95',
        'ratio',
        ...(cost ? ['memory cost', 'ratio'] : []),
        'statements/turn',
        'syncs/turn',
        'round trips/turn',
      ],
      rows.map((r) => [
        r.side,
        r.mean,
        r.p95,
        `${r.ratio}×`,
        ...(cost
          ? [r.memoryCost ?? '–', r.memoryCostRatio === undefined ? '–' : `${r.memoryCostRatio}×`]
          : []),
        r.statements,
        r.syncs,
        r.roundTrips,
      ]),
    ),
  );
  console.log('');
}

/** The store operations part: LangGraph's PostgresStore and KiokuStore, each in a schema of the database. */
async function storeOperations(url: string, items: number, queries: number) {
  const w = workload(items, queries);
  const langgraph = PostgresStore.fromConnString(url, { schema: 'bench_lg' });
  await langgraph.setup();
  const stores = createPostgresStores({
    url,
    schema: 'bench_kioku',
    clientOptions: { max: 4, onnotice: () => {} },
  });
  await stores.setup();
  const kioku = new KiokuStore({ stores, source: 'user' }).forUser('bench-user');
  try {
    const { langgraph: lg, kioku: ki } = await runWorkload({ langgraph, kioku }, w);
    const rows = OPS.map((op) => {
      const a = summary(lg.times[op]);
      const b = summary(ki.times[op]);
      return { op, langgraph: a, kioku: b, ratio: round(b.mean / a.mean, 2) };
    });
    return { rows, hitsPerQuery: { langgraph: lg.hitsPerQuery, kioku: ki.hitsPerQuery } };
  } finally {
    await langgraph.stop();
    await stores.close();
  }
}

async function main() {
  const args = cliArgs();
  const items = Number(flagValue(args, '--items') ?? 2000);
  const queries = Number(flagValue(args, '--queries') ?? 200);
  const users = Number(flagValue(args, '--users') ?? 20);
  const turnsPerUser = Number(flagValue(args, '--turns') ?? 8);
  const json = args.includes('--json');

  const database = `bench_frameworks_${randomBytes(4).toString('hex')}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${database}"`);
  const dbUrl = new URL(SERVER_URL);
  dbUrl.pathname = `/${database}`;
  const url = dbUrl.toString();
  try {
    const mastra = withRatios(await turnGroup(MASTRA_SIDES, url, users, turnsPerUser), 1, 0);
    const langgraph = withRatios(await turnGroup(LANGGRAPH_SIDES, url, users, turnsPerUser), 0);
    const ops = await storeOperations(url, items, queries);

    const n = users * turnsPerUser;
    printTurnGroup(
      `Mastra agent turn on PostgreSQL: ${users} users × ${turnsPerUser} turns (${n} timed per side; ms per turn; ratio = mean ÷ Mastra Memory's; memory cost = an agent turn's mean − the agent's without memory, Kioku's own turn's mean)`,
      mastra,
    );
    printTurnGroup(
      `LangGraph memory turn on PostgreSQL (search the user's memories, put the exchange): ${n} turns per side; ratio = mean ÷ PostgresStore's`,
      langgraph,
    );
    console.log(
      `LangGraph BaseStore on PostgreSQL: ${items} items, ${queries} queries (ms per operation; ratio = Kioku ÷ LangGraph mean)\n`,
    );
    console.log(
      table(
        ['operation', 'PostgresStore mean', 'p95', 'KiokuStore mean', 'p95', 'ratio'],
        ops.rows.map((r) => [
          r.op,
          r.langgraph.mean,
          r.langgraph.p95,
          r.kioku.mean,
          r.kioku.p95,
          `${r.ratio}×`,
        ]),
      ),
    );
    console.log(
      `\nhits per query (limit 10): PostgresStore ${round(ops.hitsPerQuery.langgraph, 2)}, KiokuStore ${round(ops.hitsPerQuery.kioku, 2)}`,
    );
    console.log(
      'statements = Execute + simple Query messages sent; syncs = Sync + simple Query (one server round trip each unless the driver pipelines: postgres.js may); round trips = times the client waited for the server (what it pipelined or sent on another connection before the answers came rides on one).',
    );
    if (json) {
      console.log(
        JSON.stringify({
          users,
          turnsPerUser,
          turns: { mastra, langgraph },
          items,
          queries,
          operations: ops.rows,
          hitsPerQuery: ops.hitsPerQuery,
        }),
      );
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

await main();
