/**
 * Tokens of the tool definitions Kioku sends with every model call, per feature set (o200k, counted as
 * the ledger counts them: `countToolsTokens`, the JSON of each definition's name, description and schema).
 *
 *   pnpm bench:tools [--json]
 *
 * The "before" column is the same measure taken on main at 7e9fe8a (20 tools with the demo's two app
 * tools, 18 of them Kioku's), kept in `TOOLS_BEFORE` so the table shows what the compact tools saved.
 */
import { createInMemoryStores, defaultTokenizer, KiokuBuilder } from '@kioku/core';
import { countToolsTokens } from '@kioku/core/model';
import { ScriptedModel } from '@kioku/core/testing';
import { cliArgs, table } from './util.js';

type Wire = (builder: KiokuBuilder) => KiokuBuilder;

/** Feature sets, each as the builder calls that turn it on. `every feature` is the demo's stack. */
const FEATURE_SETS: ReadonlyArray<{ key: string; wire: Wire }> = [
  { key: 'facts (all)', wire: (b) => b.withFacts() },
  { key: 'facts (recall)', wire: (b) => b.withFacts({ mode: 'recall' }) },
  { key: 'plan mode', wire: (b) => b.withPlanMode() },
  { key: 'working memory', wire: (b) => b.withWorkingMemory() },
  { key: 'tool-output offload', wire: (b) => b.withToolOutputOffload() },
  { key: 'feedback', wire: (b) => b.withFeedback() },
  {
    key: 'every feature',
    wire: (b) =>
      b
        .withFacts()
        .withKnowledge({ strategy: 'indexed', topK: 3 })
        .withPlanMode()
        .withMemory()
        .withToolOutputOffload()
        .withFeedback(),
  },
];

/** Measured on main at 7e9fe8a, before the compact tools (tools, tokens). */
const TOOLS_BEFORE: Record<string, { tools: number; tokens: number }> = {
  'facts (all)': { tools: 3, tokens: 373 },
  'facts (recall)': { tools: 4, tokens: 475 },
  'plan mode': { tools: 5, tokens: 483 },
  'working memory': { tools: 4, tokens: 685 },
  'tool-output offload': { tools: 2, tokens: 207 },
  feedback: { tools: 1, tokens: 147 },
  'every feature': { tools: 18, tokens: 2273 },
};

interface Row {
  features: string;
  tools: number;
  tokens: number;
  names: string[];
  before?: { tools: number; tokens: number };
}

async function measure(key: string, wire: Wire): Promise<Row> {
  const stores = createInMemoryStores();
  const kioku = wire(new KiokuBuilder({ stores, model: new ScriptedModel([]) })).build();
  const conversation = await kioku.startConversation({ userId: 'bench' });
  const tools = conversation.tools;
  const before = TOOLS_BEFORE[key];
  return {
    features: key,
    tools: tools.length,
    tokens: countToolsTokens(defaultTokenizer, tools),
    names: tools.map((t) => t.function.name),
    ...(before ? { before } : {}),
  };
}

async function main(): Promise<void> {
  const json = cliArgs().includes('--json');
  const rows: Row[] = [];
  for (const { key, wire } of FEATURE_SETS) rows.push(await measure(key, wire));
  console.log(
    table(
      ['features', 'tools before', 'tokens before', 'tools', 'tokens', 'saved'],
      rows.map((r) => [
        r.features,
        r.before?.tools ?? '-',
        r.before?.tokens ?? '-',
        r.tools,
        r.tokens,
        r.before ? `${Math.round((1 - r.tokens / r.before.tokens) * 100)}%` : '-',
      ]),
    ),
  );
  const every = rows.find((r) => r.features === 'every feature')!;
  console.log(`\nevery feature: ${every.names.join(', ')}`);
  if (json) console.log(JSON.stringify({ bench: 'tools', tokenizer: defaultTokenizer.name, rows }));
}

await main();
