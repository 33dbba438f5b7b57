/**
 * How the Redis fact store's search performs, and what the alternative would cost.
 *
 *   pnpm --filter @kioku/store-redis bench [--sizes 10000,100000] [--url redis://127.0.0.1:6379]
 *
 * Facts are LoCoMo observation sentences with people renamed (../shared/bench-data/locomo10.json or
 * KIOKU_BENCH_DATA; a small vocabulary when absent), all in one user's partition, under a random prefix
 * deleted afterwards. Measured per size:
 *
 * - writes/s through `create` (64 at a time) beside raw `HSET` of the same JSON, and `get` beside `HGET`
 *   (a rough figure: `pnpm bench:store --adapter redis` in tools/bench compares create, get and search with
 *   the same commands and scripts issued by hand, interleaved, and is the one to use for adapter overhead);
 * - search: cold (a new store: load the partition + build core's LexicalIndex), warm (cache current: one
 *   Lua round trip + ranking), and right after a write by another client (the change is fetched and
 *   applied to the index incrementally);
 * - the alternative, an inverted index kept in Redis (a HASH per term: fact id → term frequency): the
 *   commands each write would add, and the time just to fetch the postings of each query's terms, before
 *   any scoring (core's ranking, feedback round included, would then still run in the client).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { englishAnalyzer } from '@kioku/core/adapter';
import { Redis } from 'ioredis';
import { RedisConnection, RedisFactStore } from '../src/index.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
};
const sizes = (flag('--sizes') ?? '10000,100000').split(',').map(Number);
const url = flag('--url') ?? process.env.KIOKU_REDIS_URL ?? 'redis://127.0.0.1:6379';

const QUERIES = [
  'What does Alice like to eat?',
  'Where does Bruno work?',
  'Which instrument does Carmen play?',
  'Does Elena have any pets?',
  'What are Farah hobbies on weekends?',
  'Where did Hana travel last summer?',
  'What is Ivan studying at school?',
  'What kind of music does Kofi listen to?',
  'painting class',
  'adopting a dog',
  'marathon running training',
  'volunteering at the shelter',
  'favorite book',
  'camping trip with kids',
  'new job at a startup',
  'birthday party plans',
  'When did Lena start pottery?',
  'What sports does Mateo play?',
  'photography hobby',
  'moving to a new city',
];
const NAMES = [
  'Alice',
  'Bruno',
  'Carmen',
  'Elena',
  'Farah',
  'Hana',
  'Ivan',
  'Kofi',
  'Lena',
  'Mateo',
  'Nia',
  'Omar',
];

function sentences(): string[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const file =
    process.env.KIOKU_BENCH_DATA ?? path.resolve(here, '../../../../shared/bench-data/locomo10.json');
  if (!existsSync(file)) {
    const out: string[] = [];
    for (const s of ['likes', 'is learning', 'recently started', 'plans to try', 'stopped'])
      for (const o of [
        'painting',
        'the violin',
        'pottery',
        'marathon training',
        'a book club',
        'photography',
      ])
        for (const w of ['every weekend', 'since last spring', 'with friends', 'after work'])
          out.push(`PERSON ${s} ${o} ${w}.`);
    return out;
  }
  type Sample = { observation?: Record<string, Record<string, Array<[string, unknown]>>> };
  const out: string[] = [];
  for (const sample of JSON.parse(readFileSync(file, 'utf8')) as Sample[]) {
    for (const session of Object.values(sample.observation ?? {}))
      for (const entries of Object.values(session)) for (const [text] of entries) out.push(text);
  }
  return out;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

const texts = sentences();
const raw = new Redis(url);

for (const size of sizes) {
  const prefix = `kioku-bench:${randomBytes(4).toString('hex')}:`;
  const scope = { userId: 'bench-user' };
  const contents = Array.from({ length: size }, (_, i) =>
    texts[i % texts.length]!.replace(
      /\b[A-Z][a-z]+\b/,
      NAMES[(i + Math.floor(i / texts.length)) % NAMES.length]!,
    ),
  );
  const writer = new RedisFactStore({ url, prefix });
  try {
    // Writes through the store, then the same JSON with plain HSET (the raw client's equivalent).
    const created: string[] = [];
    const writeMs = await timed(() =>
      inBatches(contents, 64, async (content) => created.push((await writer.create(scope, { content })).id)),
    );
    const sample = (await writer.get(scope, created[0]!))!;
    const rawKey = `${prefix}raw`;
    const rawMs = await timed(() =>
      inBatches(contents, 64, (content) =>
        raw.hset(rawKey, randomBytes(6).toString('hex'), JSON.stringify({ ...sample, content })),
      ),
    );
    const getTimes: number[] = [];
    const hgetTimes: number[] = [];
    for (let i = 0; i < 500; i++) {
      const id = created[(i * 7919) % created.length]!;
      getTimes.push(await timed(() => writer.get(scope, id)));
      hgetTimes.push(await timed(() => raw.hget(`${prefix}facts:{bench-user}:-:rec`, id)));
    }

    // Search from a store that has never seen the partition: load + index on the first query.
    const reader = new RedisFactStore({ url, prefix });
    const heapBefore = process.memoryUsage().heapUsed;
    const coldMs = await timed(() => reader.search(scope, { query: QUERIES[0]! }));
    const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
    const warm: number[] = [];
    for (let round = 0; round < 5; round++)
      for (const query of QUERIES) warm.push(await timed(() => reader.search(scope, { query })));
    const afterWrite: number[] = [];
    for (const [i, query] of QUERIES.entries()) {
      await writer.create(scope, { content: `Fresh note ${i}: ${contents[i]}` });
      afterWrite.push(await timed(() => reader.search(scope, { query })));
    }
    await reader.close();

    // The alternative: postings in Redis. Build them for this corpus, then fetch each query's postings.
    const df = new Map<string, Map<string, number>>();
    let postingsWrites = 0;
    contents.forEach((content, i) => {
      const counts = new Map<string, number>();
      for (const term of englishAnalyzer.terms(content)) counts.set(term, (counts.get(term) ?? 0) + 1);
      postingsWrites += counts.size;
      for (const [term, tf] of counts) {
        const posting = df.get(term) ?? new Map<string, number>();
        df.set(term, posting);
        posting.set(created[i]!, tf);
      }
    });
    const pipeline = raw.pipeline();
    for (const [term, posting] of df) pipeline.hset(`${prefix}postings:${term}`, Object.fromEntries(posting));
    await pipeline.exec();
    const fetchTimes: number[] = [];
    const fetched: number[] = [];
    for (const query of QUERIES) {
      const terms = [...new Set(englishAnalyzer.terms(query))];
      fetched.push(terms.reduce((n, t) => n + (df.get(t)?.size ?? 0), 0));
      fetchTimes.push(
        await timed(async () => {
          const p = raw.pipeline();
          for (const t of terms) p.hgetall(`${prefix}postings:${t}`);
          await p.exec();
        }),
      );
    }

    console.log(`\n${size.toLocaleString('en')} facts in one partition`);
    console.log(
      `  writes: create ${Math.round(size / (writeMs / 1000))}/s, raw HSET ${Math.round(size / (rawMs / 1000))}/s (${(writeMs / rawMs).toFixed(2)}×)`,
    );
    console.log(
      `  get p50 ${ms(percentile(getTimes, 50))} (raw HGET ${ms(percentile(hgetTimes, 50))}), p95 ${ms(percentile(getTimes, 95))} (${ms(percentile(hgetTimes, 95))})`,
    );
    console.log(`  search cold (load + index): ${ms(coldMs)}, cache ≈ ${heapMb.toFixed(0)} MB heap`);
    console.log(`  search warm: p50 ${ms(percentile(warm, 50))}, p95 ${ms(percentile(warm, 95))}`);
    console.log(
      `  search after another client's write: p50 ${ms(percentile(afterWrite, 50))}, p95 ${ms(percentile(afterWrite, 95))}`,
    );
    console.log(
      `  postings in Redis (alternative): +${(postingsWrites / size).toFixed(1)} HSETs per write; fetching a query's postings ` +
        `(${Math.round(percentile(fetched, 50)).toLocaleString('en')} entries p50) p50 ${ms(percentile(fetchTimes, 50))}, p95 ${ms(percentile(fetchTimes, 95))}, before scoring`,
    );
  } finally {
    await writer.close();
    await new RedisConnection({ client: raw, prefix }).deleteAll();
  }
}
await raw.quit();
