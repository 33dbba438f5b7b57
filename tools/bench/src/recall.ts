/**
 * LoCoMo retrieval recall (the paper's "recall accuracy"), Kioku's LexicalIndex against peers.
 * Protocol: /work/shared/bench-data/README.md — one index per conversation, dialog turns as units,
 * question as query, score = |evidence ∩ top-k| / |evidence|, per category and overall.
 *
 *   pnpm bench:recall [--json] [--ablation]
 */
import { ablationEngines } from './ablation.js';
import { type Engine, kiokuEngine, miniSearchEngine, plainBm25Engine, winkEngine } from './engines.js';
import { DRAGON, type EngineResult, evaluate, KS } from './evaluate.js';
import { CATEGORY_NAMES, loadLocomo, locomoPath } from './locomo.js';
import { cliArgs, table } from './util.js';

function main(): void {
  const args = cliArgs();
  const json = args.includes('--json');
  const ablation = args.includes('--ablation');
  const conversations = loadLocomo();
  const questions = conversations.reduce((a, c) => a + c.questions.length, 0);
  const turns = conversations.reduce((a, c) => a + c.units.length, 0);

  const engines: Engine[] = [kiokuEngine(), plainBm25Engine, miniSearchEngine, winkEngine];
  if (ablation) engines.push(...ablationEngines());
  const results = engines.map((e) => evaluate(e, conversations));
  const [kioku, ...peers] = results as [EngineResult, ...EngineResult[]];

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
    };
    console.log(JSON.stringify(out));
  }
}

main();
