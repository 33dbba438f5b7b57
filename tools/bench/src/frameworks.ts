/**
 * `pnpm bench:frameworks [--items N] [--queries Q] [--json]`: LangGraph's `BaseStore` operations side by
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
import { cliArgs, flagValue, mean, percentile, round, seededRandom, table } from './util.js';

const PG_URL = process.env.KIOKU_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
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

async function main() {
  const args = cliArgs();
  const items = Number(flagValue(args, '--items') ?? 2000);
  const queries = Number(flagValue(args, '--queries') ?? 200);
  const json = args.includes('--json');
  const w = workload(items, queries);
  const suffix = randomBytes(4).toString('hex');

  const langgraph = PostgresStore.fromConnString(PG_URL, { schema: `bench_lg_${suffix}` });
  await langgraph.setup();
  const stores = createPostgresStores({
    url: PG_URL,
    schema: `bench_kioku_${suffix}`,
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
    console.log(
      `LangGraph BaseStore on PostgreSQL: ${items} items, ${queries} queries (ms per operation; ratio = Kioku ÷ LangGraph mean)\n`,
    );
    console.log(
      table(
        ['operation', 'PostgresStore mean', 'p95', 'KiokuStore mean', 'p95', 'ratio'],
        rows.map((r) => [r.op, r.langgraph.mean, r.langgraph.p95, r.kioku.mean, r.kioku.p95, `${r.ratio}×`]),
      ),
    );
    console.log(
      `\nhits per query (limit 10): PostgresStore ${round(lg.hitsPerQuery, 2)}, KiokuStore ${round(ki.hitsPerQuery, 2)}`,
    );
    if (json) {
      console.log(
        JSON.stringify({
          items,
          queries,
          operations: rows,
          hitsPerQuery: { langgraph: lg.hitsPerQuery, kioku: ki.hitsPerQuery },
        }),
      );
    }
  } finally {
    await langgraph.stop();
    await stores.close();
    const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "bench_lg_${suffix}" CASCADE`);
    await sql.unsafe(`DROP SCHEMA IF EXISTS "bench_kioku_${suffix}" CASCADE`);
    await sql.end();
  }
}

await main();
