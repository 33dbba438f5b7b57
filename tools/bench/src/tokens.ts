/**
 * Tokens injected versus the full conversation, on LoCoMo: each conversation is replayed turn by turn
 * through Kioku, then every question is prepared as a turn with a 2,000-token memory budget, and the
 * bench checks which evidence turns made it into the prompt.
 *
 *   pnpm bench:tokens [--budget 2000] [--configs a,b] [--conversations 10] [--per-question] [--json]
 *
 * Ingestion (as a deployment would do it while the conversation goes on): one Kioku session per LoCoMo
 * session, each dialog turn recorded in that session's transcript (`Conversation.record`) and saved at
 * once as a fact in the user's memory — content `<speaker> said, "<text>"` (+ ` and shared
 * <caption>`), category `conversation`, metadata `{ dia_id, session, date }`, timestamped with the
 * session's date. Questions come afterwards: each is prepared (never recorded, so delta injection does
 * not hide earlier answers' facts) in a new session, except for the replay-only row, which continues the
 * last dialog session. Budget: `maxTokens` = the question's own tokens + `--budget`, so the memory
 * blocks get exactly the budget.
 */
import { performance } from 'node:perf_hooks';
import { defaultTokenizer } from '@kioku/core';
import { CATEGORY_NAMES, loadLocomo } from './locomo.js';
import {
  askQuestions,
  fullText,
  ingest,
  type QuestionResult,
  SETUPS,
  type Summary,
  summarise,
} from './locomo-prompts.js';
import { cliArgs, flagValue, mean, percentile, round, table } from './util.js';

function parseArgs() {
  const args = cliArgs();
  const budget = Number(flagValue(args, '--budget') ?? 2000);
  if (!Number.isInteger(budget) || budget <= 0) throw new Error('--budget takes a positive integer');
  const conversations = Number(flagValue(args, '--conversations') ?? 10);
  const keys = flagValue(args, '--configs')
    ?.split(',')
    .map((k) => k.trim());
  const unknown = keys?.filter((k) => !SETUPS.some((s) => s.key === k));
  if (unknown?.length)
    throw new Error(`unknown --configs ${unknown.join(', ')}; known: ${SETUPS.map((s) => s.key).join(', ')}`);
  return {
    json: args.includes('--json'),
    perQuestion: args.includes('--per-question'),
    budget,
    conversations,
    setups: keys ? SETUPS.filter((s) => keys.includes(s.key)) : SETUPS,
  };
}

async function main(): Promise<void> {
  const options = parseArgs();
  const conversations = loadLocomo().slice(0, options.conversations);
  const startedAt = performance.now();
  const bySetup = new Map<string, QuestionResult[]>(options.setups.map((s) => [s.key, []]));
  const fullResults: QuestionResult[] = [];
  const fullTokens: number[] = [];

  for (const conv of conversations) {
    const full = defaultTokenizer.count(fullText(conv));
    fullTokens.push(full);
    const textOf = new Map(conv.units.map((u) => [u.id, u.text]));
    const ingested = await ingest(conv);

    for (const q of conv.questions) {
      const known = q.evidence.filter((id) => textOf.has(id)).length;
      fullResults.push({
        sampleId: conv.sampleId,
        question: q.question,
        category: q.category,
        injected: full,
        items: conv.units.length,
        full,
        evidence: q.evidence.length,
        present: known,
        score: q.evidence.length === 0 ? 1 : known / q.evidence.length,
        prepareMs: 0,
      });
    }

    for (const setup of options.setups) {
      bySetup.get(setup.key)!.push(...(await askQuestions(conv, ingested, setup, options)));
    }
    if (!options.json) console.error(`  ${conv.sampleId} done`);
  }
  const runtimeS = round((performance.now() - startedAt) / 1000, 0);

  const categories = Object.keys(CATEGORY_NAMES).map(Number);
  const rows: Array<{ key: string; name: string; results: QuestionResult[] }> = [
    { key: 'full', name: 'full conversation (reference)', results: fullResults },
    ...options.setups.map((s) => ({ key: s.key, name: s.name, results: bySetup.get(s.key)! })),
  ];
  const summaries = rows.map((row) => ({
    ...row,
    overall: summarise(row.results),
    byCategory: Object.fromEntries(
      categories.map((c) => [c, summarise(row.results.filter((r) => r.category === c))]),
    ) as Record<number, Summary>,
    prepareP50: round(
      percentile(
        row.results.map((r) => r.prepareMs).sort((a, b) => a - b),
        50,
      ),
      3,
    ),
  }));
  const questions = fullResults.length;
  const singleHop = 4;

  const lines: string[] = [
    `LoCoMo token bench: ${conversations.length} conversations, ${questions} questions, memory budget ${options.budget} tokens (+ the question)`,
    `full conversation: mean ${round(mean(fullTokens), 0)} tokens (o200k_base; ${Math.min(...fullTokens)}–${Math.max(...fullTokens)}), ${runtimeS} s`,
    '',
    'Overall. items = facts, memories or turns injected (mean); evidence % = mean per-question share of',
    'evidence turns in the prompt (empty evidence = 1); turns % = evidence turns present / all evidence',
    'turns; all % = questions with every evidence turn present.',
    table(
      [
        'configuration',
        'injected tokens',
        'items',
        'compression',
        'evidence %',
        'turns %',
        'all %',
        'single-hop %',
        'prepare p50 ms',
      ],
      summaries.map((s) => [
        s.name,
        s.overall.meanInjected,
        s.overall.meanItems.toFixed(1),
        `${s.overall.compression.toFixed(1)}×`,
        s.overall.evidencePct.toFixed(1),
        s.overall.turnsPct.toFixed(1),
        s.overall.allPct.toFixed(1),
        s.byCategory[singleHop]!.evidencePct.toFixed(1),
        s.key === 'full' ? '-' : s.prepareP50.toFixed(3),
      ]),
    ),
    '',
    'Evidence % by category (n):',
    table(
      [
        'configuration',
        ...categories.map((c) => `${CATEGORY_NAMES[c]} (${summaries[0]!.byCategory[c]!.n})`),
        'overall',
      ],
      summaries.map((s) => [
        s.name,
        ...categories.map((c) => s.byCategory[c]!.evidencePct.toFixed(1)),
        s.overall.evidencePct.toFixed(1),
      ]),
    ),
    '',
    'Mean injected tokens by category (compression vs the full conversation):',
    table(
      ['configuration', ...categories.map((c) => CATEGORY_NAMES[c]!), 'overall'],
      summaries
        .filter((s) => s.key !== 'full')
        .map((s) => [
          s.name,
          ...categories.map(
            (c) => `${s.byCategory[c]!.meanInjected} (${s.byCategory[c]!.compression.toFixed(0)}×)`,
          ),
          `${s.overall.meanInjected} (${s.overall.compression.toFixed(0)}×)`,
        ]),
    ),
  ];
  if (options.perQuestion) {
    for (const s of summaries.filter((x) => x.key !== 'full')) {
      lines.push('', `Per question — ${s.name}:`);
      lines.push(
        table(
          ['question', 'conversation', 'category', 'injected', 'full', 'evidence'],
          s.results.map((r) => [
            r.question.length > 70 ? `${r.question.slice(0, 67)}...` : r.question,
            r.sampleId,
            CATEGORY_NAMES[r.category] ?? String(r.category),
            r.injected,
            r.full,
            `${r.present}/${r.evidence}`,
          ]),
        ),
      );
    }
  }
  console.log(lines.join('\n'));

  if (options.json) {
    const best = summaries
      .filter((s) => s.key !== 'full')
      .sort((a, b) => b.byCategory[singleHop]!.evidencePct - a.byCategory[singleHop]!.evidencePct)[0];
    const asJson = (x: Summary) => ({
      n: x.n,
      mean_injected_tokens: x.meanInjected,
      mean_items: x.meanItems,
      compression: x.compression,
      evidence_pct: x.evidencePct,
      evidence_turns_pct: x.turnsPct,
      all_evidence_pct: x.allPct,
    });
    console.log(
      JSON.stringify({
        bench: 'tokens',
        budget: options.budget,
        conversations: conversations.length,
        questions,
        full_tokens_mean: round(mean(fullTokens), 0),
        configs: Object.fromEntries(
          summaries.map((s) => [
            s.key,
            {
              name: s.name,
              ...asJson(s.overall),
              prepare_p50_ms: s.key === 'full' ? null : s.prepareP50,
              by_category: Object.fromEntries(
                categories.map((c) => [CATEGORY_NAMES[c]!, asJson(s.byCategory[c]!)]),
              ),
            },
          ]),
        ),
        ...(best
          ? {
              target: {
                single_hop_evidence_pct_min: 80,
                best_config: best.key,
                single_hop_evidence_pct: best.byCategory[singleHop]!.evidencePct,
                reached: best.byCategory[singleHop]!.evidencePct >= 80,
              },
            }
          : {}),
        runtime_s: runtimeS,
      }),
    );
  }
}

await main();
