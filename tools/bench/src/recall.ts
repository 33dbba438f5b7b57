/**
 * LoCoMo retrieval recall (the paper's "recall accuracy"), Kioku's recall against peers.
 * Protocol: /work/shared/bench-data/README.md — one index per conversation, dialog turns as units,
 * question as query, score = |evidence ∩ top-k| / |evidence|, per category and overall, and per half
 * (conversations 0–4, on which every parameter was chosen, and 5–9, held out).
 *
 *   pnpm bench:recall [--json] [--ablation] [--adapter memory,json,sqlite,postgres,redis|all]
 *                     [--embedder hashing|sentence] [--weights 1,0.25,…] [--candidates 150,…]
 *                     [--half 0-4] [--embed-cache FILE]
 *
 * "Kioku" is core's recall as an application gets it: the in-memory fact store's lexical search, re-ranked by
 * recall's signals (`RecallFactStore`), each turn a fact with its session, turn and event time.
 * `--adapter` adds a row per store (recall-stores.ts), `--ablation` one row per signal left out and per
 * analyzer change, `--embedder hashing` hybrid recall with the built-in HashingEmbedder at several weights,
 * `--embedder sentence` with `@kioku/embed-local`'s offline sentence encoder (weights `--weights`, pools
 * `--candidates`, each pair a row, then the encoder's defaults). `--half 0-4` runs conversations 0–4 alone
 * (for choosing parameters without seeing 5–9).
 */
import { type Embedder, HashingEmbedder } from '@kioku/core';
import { DEFAULT_SIGNAL_WEIGHTS, type SignalWeights } from '@kioku/core/store';
import { ablationEngines } from './ablation.js';
import { MemoEmbedder } from './embed-memo.js';
import { type Engine, kiokuEngine, miniSearchEngine, plainBm25Engine, winkEngine } from './engines.js';
import { DRAGON, type EngineResult, evaluate, HALVES, KS } from './evaluate.js';
import { CATEGORY_NAMES, type Conversation, loadLocomo, locomoPath } from './locomo.js';
import {
  RECALL_ADAPTERS,
  type RecallAdapter,
  type StoreEngineOptions,
  storeEngine,
} from './recall-stores.js';
import { cliArgs, flagValue, table } from './util.js';

function adaptersArg(args: readonly string[]): RecallAdapter[] {
  const names = (flagValue(args, '--adapter') ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => n !== 'all' && !(RECALL_ADAPTERS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new Error(`--adapter: unknown ${unknown.join(', ')} (use ${RECALL_ADAPTERS.join(', ')} or all)`);
  }
  return names.includes('all') ? [...RECALL_ADAPTERS] : (names as RecallAdapter[]);
}

const EMBEDDERS = ['hashing', 'sentence'] as const;

function embedderArg(args: readonly string[]): (typeof EMBEDDERS)[number] | undefined {
  const name = flagValue(args, '--embedder');
  if (name === undefined) return undefined;
  if (!(EMBEDDERS as readonly string[]).includes(name)) {
    throw new Error(`--embedder: unknown ${name} (use ${EMBEDDERS.join(', ')})`);
  }
  return name as (typeof EMBEDDERS)[number];
}

/** A row: an engine over a store to open (and close), or a plain engine. */
type Row = { store: RecallAdapter; options: StoreEngineOptions } | Engine;

/** Hybrid recall's vector weights shown with `--embedder`: equal RRF down to the HashingEmbedder's default. */
const VECTOR_WEIGHTS = [1, 0.25, 0.1, 0.05, 0.02] as const;

/** The sentence encoder's rows without `--weights`: equal RRF, and around its default. */
const SENTENCE_WEIGHTS = [1, 0.5, 0.1] as const;

function numbersArg(args: readonly string[], flag: string): number[] | undefined {
  const value = flagValue(args, flag);
  if (value === undefined) return undefined;
  const numbers = value.split(',').map((s) => Number(s.trim()));
  if (numbers.some((n) => !(n >= 0) || !Number.isFinite(n)))
    throw new Error(`${flag}: numbers of at least 0`);
  return numbers;
}

/** `@kioku/embed-local`'s encoder behind a per-run memo, the questions embedded in batches beforehand. */
async function sentenceEmbedder(
  args: readonly string[],
  conversations: readonly Conversation[],
): Promise<{ memo: MemoEmbedder; inner: Embedder; lines: string[] }> {
  const { SentenceEncoderEmbedder } = await import('@kioku/embed-local');
  const inner = new SentenceEncoderEmbedder();
  const t0 = performance.now();
  await inner.load();
  const loadMs = performance.now() - t0;
  const memo = new MemoEmbedder(inner, flagValue(args, '--embed-cache'));
  const questions = conversations.flatMap((c) => c.questions.map((q) => q.question));
  const alone = await memo.embedLatency(questions.filter((_, i) => i % 10 === 0));
  await memo.embed(questions);
  const lines = [
    `sentence encoder (${inner.modelId}, ${inner.dimensions}-d): model load ${loadMs.toFixed(0)} ms; one query embedded alone p50 ${alone.p50} / p95 ${alone.p95} ms (${alone.n} questions); search latencies below exclude it (questions embedded beforehand in batches of ${inner.maxBatchSize})`,
  ];
  return { memo, inner, lines };
}

async function main(): Promise<void> {
  const args = cliArgs();
  const json = args.includes('--json');
  const ablation = args.includes('--ablation');
  const adapters = adaptersArg(args);
  const embedder = embedderArg(args);
  const half = flagValue(args, '--half');
  if (half !== undefined && half !== '0-4')
    throw new Error('--half: only 0-4 (the half parameters are chosen on)');
  const conversations = half === '0-4' ? loadLocomo().slice(0, 5) : loadLocomo();
  const questions = conversations.reduce((a, c) => a + c.questions.length, 0);
  const turns = conversations.reduce((a, c) => a + c.units.length, 0);

  const rows: Row[] = [
    { store: 'memory', options: { name: 'Kioku' } },
    kiokuEngine('Kioku, lexical search alone'),
    plainBm25Engine,
    miniSearchEngine,
    winkEngine,
  ];
  const signalRows: string[] = [];
  if (ablation) {
    for (const signal of Object.keys(DEFAULT_SIGNAL_WEIGHTS) as Array<keyof SignalWeights>) {
      const name = `Kioku without the ${signal} signal`;
      signalRows.push(name);
      rows.push({ store: 'memory', options: { name, signals: { [signal]: 0 } } });
    }
    rows.push(...ablationEngines());
  }
  const embedderRows: string[] = [];
  /** The ranked lists of the default hybrid row in memory and of the same on SQLite + sqlite-vec. */
  const inMemoryHybrid = new Map<string, string[]>();
  const sqliteHybrid = new Map<string, string[]>();
  let hybridEmbedder: Embedder | undefined;
  if (embedder === 'hashing') {
    const hashing = new HashingEmbedder();
    for (const weight of numbersArg(args, '--weights') ?? VECTOR_WEIGHTS) {
      const name = `Kioku + hashing vectors, weight ${weight}`;
      embedderRows.push(name);
      rows.push({ store: 'memory', options: { name, embedder: hashing, vectorWeight: weight } });
    }
    const name = `Kioku + hashing vectors (default, weight ${hashing.fusionWeight})`;
    embedderRows.push(name);
    rows.push({ store: 'memory', options: { name, embedder: hashing, rankings: inMemoryHybrid } });
    hybridEmbedder = hashing;
  }
  let sentence: Awaited<ReturnType<typeof sentenceEmbedder>> | undefined;
  if (embedder === 'sentence') {
    sentence = await sentenceEmbedder(args, conversations);
    const { memo } = sentence;
    const pools = numbersArg(args, '--candidates') ?? [undefined];
    for (const weight of numbersArg(args, '--weights') ?? SENTENCE_WEIGHTS) {
      for (const candidates of pools) {
        const name = `Kioku + sentence vectors, weight ${weight}${candidates === undefined ? '' : `, pool ${candidates}`}`;
        embedderRows.push(name);
        rows.push({
          store: 'memory',
          options: {
            name,
            embedder: memo,
            vectorWeight: weight,
            ...(candidates === undefined ? {} : { candidates }),
          },
        });
      }
    }
    const name = `Kioku + sentence vectors (default, weight ${memo.fusionWeight})`;
    embedderRows.push(name);
    rows.push({ store: 'memory', options: { name, embedder: memo, rankings: inMemoryHybrid } });
    hybridEmbedder = memo;
  }
  // The default hybrid again on SQLite, its vectors in the database (sqlite-vec): it must rank the same.
  if (hybridEmbedder && adapters.includes('sqlite')) {
    const name = `Kioku + ${embedder} vectors (default) via sqlite, vectors in sqlite-vec`;
    embedderRows.push(name);
    rows.push({
      store: 'sqlite',
      options: { name, embedder: hybridEmbedder, storeVectors: true, rankings: sqliteHybrid },
    });
  }
  for (const adapter of adapters) rows.push({ store: adapter, options: {} });

  const results: EngineResult[] = [];
  const unavailable: Record<string, string> = {};
  const stores: Partial<Record<RecallAdapter, EngineResult>> = {};
  for (const row of rows) {
    if (!('store' in row)) {
      results.push(await evaluate(row, conversations));
      continue;
    }
    const opened = await storeEngine(row.store, row.options);
    if (typeof opened === 'string') {
      unavailable[row.store] = opened;
      continue;
    }
    try {
      const result = await evaluate(opened.engine, conversations);
      results.push(result);
      if (!row.options.name) stores[row.store] = result;
    } finally {
      await opened.close();
    }
  }
  sentence?.memo.save();
  const sameRankings = compareRankings(inMemoryHybrid, sqliteHybrid);
  const [kioku, ...others] = results as [EngineResult, ...EngineResult[]];
  const peers = others.filter((r) => !Object.values(stores).includes(r));

  const lines: string[] = [];
  lines.push(
    `LoCoMo retrieval recall (%), ${conversations.length} conversations, ${turns} turns, ${questions} questions`,
    `data: ${locomoPath()}${half === '0-4' ? ' (conversations 0–4 only)' : ''}`,
    ...(sentence?.lines ?? []),
    ...(sentence
      ? [
          `model time in this run: ${sentence.memo.embedded} texts in ${(sentence.memo.embedMs / 1000).toFixed(1)} s (${(sentence.memo.embedMs / Math.max(1, sentence.memo.embedded)).toFixed(1)} ms a text in batches)`,
        ]
      : []),
    '',
    table(
      ['engine', 'R@5', 'R@10', 'R@25', 'R@50', 'p50 ms', 'p95 ms', 'build ms'],
      [
        ...results.map((r) => [
          r.name,
          ...KS.map((k) => r.overall[k]!.toFixed(1)),
          r.latency.p50.toFixed(3),
          r.latency.p95.toFixed(3),
          r.buildMs,
        ]),
        ['DRAGON (published)', ...KS.map((k) => DRAGON[k]!.toFixed(1)), '-', '-', '-'],
      ],
    ),
    '',
    'R@10 by category (n):',
    table(
      [
        'engine',
        ...Object.entries(CATEGORY_NAMES).map(
          ([c, name]) =>
            `${name} (${conversations.reduce((a, conv) => a + conv.questions.filter((q) => q.category === Number(c)).length, 0)})`,
        ),
      ],
      results.map((r) => [
        r.name,
        ...Object.values(CATEGORY_NAMES).map((name) => r.byCategory[name]?.['10']?.toFixed(1) ?? '-'),
      ]),
    ),
    '',
    'By half: conversations 0–4 (every parameter chosen there) and 5–9 (held out):',
    table(
      [
        'engine',
        ...Object.keys(HALVES).flatMap((h) => [
          `${h} R@5`,
          `${h} R@10`,
          `${h} multi-hop`,
          `${h} open-domain`,
        ]),
      ],
      results.map((r) => [
        r.name,
        ...Object.values(r.halves).flatMap((h) => [
          h.overall['5']!.toFixed(1).replace('NaN', '-'),
          h.overall['10']!.toFixed(1).replace('NaN', '-'),
          h.byCategory['multi-hop']?.['10']?.toFixed(1) ?? '-',
          h.byCategory['open-domain']?.['10']?.toFixed(1) ?? '-',
        ]),
      ]),
    ),
    '',
    ...Object.entries(unavailable).map(([adapter, why]) => `${adapter}: not available (${why})`),
    ...(sameRankings
      ? [
          `hybrid on SQLite + sqlite-vec against the same in memory: ${sameRankings.identical} of ${sameRankings.lists} ranked lists identical (ids in order)${sameRankings.differ.length > 0 ? `; first differing: ${sameRankings.differ.slice(0, 3).join(' | ')}` : ''}`,
          '',
        ]
      : []),
    `${kioku.name} by category:`,
    table(
      ['category', 'R@5', 'R@10', 'R@25', 'R@50'],
      Object.entries(kioku.byCategory).map(([name, v]) => [name, ...KS.map((k) => v[k]!.toFixed(1))]),
    ),
  );
  console.log(lines.join('\n'));

  if (json) {
    const out = {
      bench: 'locomo-recall',
      engine: kioku.name,
      overall: kioku.overall,
      byCategory: kioku.byCategory,
      halves: kioku.halves,
      latency_ms: kioku.latency,
      signal_weights: DEFAULT_SIGNAL_WEIGHTS,
      peers: {
        ...Object.fromEntries(
          peers.map((p) => [
            p.name,
            { overall: p.overall, byCategory: p.byCategory, halves: p.halves, latency_ms: p.latency },
          ]),
        ),
        'DRAGON (published)': { overall: DRAGON },
      },
      adapters: Object.fromEntries(
        Object.entries(stores).map(([a, r]) => [
          a,
          { overall: r.overall, byCategory: r.byCategory, halves: r.halves, latency_ms: r.latency },
        ]),
      ),
      signal_ablation: signalRows,
      embedder_rows: embedderRows,
      ...(sameRankings
        ? { sqlite_vec_same_rankings: { identical: sameRankings.identical, lists: sameRankings.lists } }
        : {}),
      unavailable,
    };
    console.log(JSON.stringify(out));
  }
}

/** How many of the lists both engines answered are the same ids in the same order; none when one is empty. */
function compareRankings(a: ReadonlyMap<string, string[]>, b: ReadonlyMap<string, string[]>) {
  if (a.size === 0 || b.size === 0) return undefined;
  let lists = 0;
  let identical = 0;
  const differ: string[] = [];
  for (const [key, ids] of a) {
    const other = b.get(key);
    if (!other) continue;
    lists++;
    if (ids.join(',') === other.join(',')) identical++;
    else differ.push(key.split('\u0000')[1] ?? key);
  }
  return { lists, identical, differ };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
