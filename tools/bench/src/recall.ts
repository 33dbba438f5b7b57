/**
 * LoCoMo retrieval recall (the paper's "recall accuracy"), Kioku's LexicalIndex against peers.
 * Protocol: /work/shared/bench-data/README.md — one index per conversation, dialog turns as units,
 * question as query, score = |evidence ∩ top-k| / |evidence|, per category and overall.
 *
 *   pnpm bench:recall [--json] [--ablation] [--adapter memory,json,sqlite,postgres,redis|all]
 *
 * `--adapter` adds a row per store: the same questions through `FactStore.search` (recall-stores.ts).
 */
import { ablationEngines } from './ablation.js';
import { type Engine, kiokuEngine, miniSearchEngine, plainBm25Engine, winkEngine } from './engines.js';
import { DRAGON, type EngineResult, evaluate, KS } from './evaluate.js';
import { CATEGORY_NAMES, loadLocomo, locomoPath } from './locomo.js';
import { RECALL_ADAPTERS, type RecallAdapter, storeEngine } from './recall-stores.js';
import { cliArgs, flagValue, table } from './util.js';

function adaptersArg(args: readonly string[]): RecallAdapter[] {
  const names = (flagValue(args, '--adapter') ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => n !== 'all' && !(RECALL_ADAPTERS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new Error(`--adapter: unknown ${unknown.join(', ')} (use ${RECALL_ADAPTERS.join(', ')} or all)`);
  }
  return names.includes('all') ? [...RECALL_ADAPTERS] : (names as RecallAdapter[]);
}

async function main(): Promise<void> {
  const args = cliArgs();
  const json = args.includes('--json');
  const ablation = args.includes('--ablation');
  const adapters = adaptersArg(args);
  const conversations = loadLocomo();
  const questions = conversations.reduce((a, c) => a + c.questions.length, 0);
  const turns = conversations.reduce((a, c) => a + c.units.length, 0);

  const engines: Engine[] = [kiokuEngine(), plainBm25Engine, miniSearchEngine, winkEngine];
  if (ablation) engines.push(...ablationEngines());
  const engineResults: EngineResult[] = [];
  for (const engine of engines) engineResults.push(await evaluate(engine, conversations));
  const [kioku, ...peers] = engineResults as [EngineResult, ...EngineResult[]];
  const stores: Partial<Record<RecallAdapter, EngineResult>> = {};
  const unavailable: Record<string, string> = {};
  for (const adapter of adapters) {
    const opened = await storeEngine(adapter);
    if (typeof opened === 'string') {
      unavailable[adapter] = opened;
      continue;
    }
    try {
      stores[adapter] = await evaluate(opened.engine, conversations);
    } finally {
      await opened.close();
    }
  }
  const results = [...engineResults, ...Object.values(stores)];

  const lines: string[] = [];
  lines.push(
    `LoCoMo retrieval recall (%), ${conversations.length} conversations, ${turns} turns, ${questions} questions`,
    `data: ${locomoPath()}`,
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
    ...Object.entries(unavailable).map(([adapter, why]) => `${adapter}: not available (${why})`),
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
      latency_ms: kioku.latency,
      peers: {
        ...Object.fromEntries(
          peers.map((p) => [p.name, { overall: p.overall, byCategory: p.byCategory, latency_ms: p.latency }]),
        ),
        'DRAGON (published)': { overall: DRAGON },
      },
      adapters: Object.fromEntries(
        Object.entries(stores).map(([a, r]) => [
          a,
          { overall: r.overall, byCategory: r.byCategory, latency_ms: r.latency },
        ]),
      ),
      unavailable,
    };
    console.log(JSON.stringify(out));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
