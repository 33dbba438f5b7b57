/**
 * Two parts. Cost (always; `lifecycle-cost.ts`): LoCoMo through extraction with a deterministic scripted
 * model, the per-turn path beside batched paths, per user turn: memory-model calls, prompt and output
 * tokens, facts written. Quality (only with `--model` and an endpoint): the memory life cycle on LoCoMo with a real model: each conversation is replayed turn by turn through
 * extraction (every dialog turn is a user message; the model proposes facts, reconciles them with the
 * user's similar ones), then a dream (consolidation, preference inference) runs; the bench prints facts
 * stored, duplicates found, tokens spent per pass, and the evidence-in-prompt figure of bench:tokens for
 * the extracted memory beside the raw turns stored as facts (bench:tokens' `long-term-fill` set-up, the
 * same budget, in the same run).
 *
 *   pnpm bench:lifecycle [--cost-conversations 10] [--batches 4,8,16] [--triggers 4] [--model <name> [--conversations 1]
 *     [--turns <n>] [--batch 8] [--budget 2000]] [--json]
 *
 * The model is any OpenAI-compatible endpoint: OPENAI_BASE_URL (Ollama, vLLM, LM Studio …) and/or
 * OPENAI_API_KEY. Without `--model` and an endpoint the bench says it skipped the quality part.
 *
 * Evidence with extracted memory: a fact stands for the dialog turn its provenance names (session +
 * turn; through a merge, every turn of the facts it merged); a question's evidence turn is present when a
 * fact standing for it is in the prompt.
 */
import { pathToFileURL } from 'node:url';
import {
  type ChatModel,
  Conversation,
  createInMemoryStores,
  defaultTokenizer,
  type Fact,
  factMemory,
  KiokuBuilder,
  type KiokuStores,
} from '@kioku/core';
import { countMessagesTokens, UsageLedger } from '@kioku/core/model';
import {
  type Changeset,
  countOperations,
  extractAndStoreFacts,
  extractBatch,
  type PassResult,
  SESSION_BATCH_DEFAULT,
} from '@kioku/core/passes';
import { ManualClock } from '@kioku/core/testing';
import { type CostRow, OUTBOX_DEFAULTS_PATH, runCostBench } from './lifecycle-cost.js';
import { type Conversation as LocomoConversation, loadLocomo } from './locomo.js';
import { cliArgs, flagValue, mean, round, table } from './util.js';

export interface LifecycleBenchOptions {
  model: ChatModel;
  modelName: string;
  conversations: LocomoConversation[];
  /** Dialog turns replayed per conversation (default all); questions whose evidence lies beyond are skipped. */
  turns?: number;
  /** Turns per extraction call (`extractBatch` over a LoCoMo session's turns); default 1, per turn. */
  batch?: number;
  budget: number;
  progress?: (line: string) => void;
}

export interface PassTally {
  operations: { create: number; update: number; delete: number };
  inputTokens: number;
  outputTokens: number;
  failures: number;
}

export interface LifecycleBenchResult {
  model: string;
  /** Turns per extraction call (1 = per turn). */
  batch: number;
  conversations: number;
  dialogTurns: number;
  questions: number;
  factsAfterExtraction: number;
  factsAfterDream: number;
  /** Candidates dedup found already known, repeats dropped, and facts a merge folded into another. */
  duplicatesFound: { dedup: number; merged: number };
  extraction: PassTally;
  dream: PassTally;
  /** Mean per-question share of evidence turns in the prompt, %: raw turns as facts, extracted memory. */
  evidencePct: { rawTurns: number; extracted: number };
  /** Mean memory tokens injected per question. */
  injectedTokens: { rawTurns: number; extracted: number };
}

const emptyTally = (): PassTally => ({
  operations: { create: 0, update: 0, delete: 0 },
  inputTokens: 0,
  outputTokens: 0,
  failures: 0,
});

function tally(into: PassTally, result: PassResult | undefined, usage: UsageLedger): void {
  if (result) addOperations(into, result.changeset);
  into.inputTokens += usage.total.inputTokens;
  into.outputTokens += usage.total.outputTokens;
}

/** The fact operations of a changeset added to a pass's tally (life-cycle passes write facts only). */
function addOperations(into: PassTally, changeset: Changeset): void {
  const counts = countOperations(changeset);
  into.operations.create += counts.create;
  into.operations.update += counts.update;
  into.operations.delete += counts.delete;
}

const userOf = (conv: LocomoConversation) => ({ userId: conv.sampleId.replace(/[^A-Za-z0-9_.@+-]/g, '_') });
const sessionOf = (diaId: string) => Number(/^D(\d+):/.exec(diaId)?.[1] ?? 0);

/** The dialog turns each fact stands for: its own (provenance session + turn), or its merged sources'. */
function turnsOfFacts(facts: readonly Fact[], origin: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const fact of facts) {
    const key = `${fact.provenance.sessionId}/${fact.provenance.turn}`;
    const own = origin.get(key) ?? [];
    const merged = (fact.provenance.sourceIds ?? []).flatMap((id) => origin.get(`fact:${id}`) ?? []);
    out.set(fact.id, [...new Set([...own, ...merged])]);
  }
  return out;
}

/** Share of the question's evidence turns that `covered` (the turns the prompt stands for) holds. */
function score(evidence: readonly string[], covered: ReadonlySet<string>): number {
  if (evidence.length === 0) return 1;
  return evidence.filter((id) => covered.has(id)).length / evidence.length;
}

async function prepareQuestion(
  stores: KiokuStores,
  scope: { userId: string },
  question: string,
  budget: number,
) {
  const features = [
    factMemory({ mode: 'recall', facts: stores.facts, sessions: stores.sessions, maxResults: 100 }),
  ];
  const session = await stores.sessions.create(scope);
  const base = countMessagesTokens(defaultTokenizer, [{ role: 'user', content: question }]);
  const conversation = new Conversation({
    scope: { ...scope, threadId: session.id },
    sessions: stores.sessions,
    features,
    budget: { maxTokens: base + budget },
  });
  const prepared = await conversation.prepare(question);
  return {
    prompt: prepared.messages
      .slice(0, -1)
      .map((m) => m.content)
      .join('\n'),
    injected: prepared.ledger.totalTokens - prepared.ledger.baseTokens,
  };
}

export async function runLifecycleBench(options: LifecycleBenchOptions): Promise<LifecycleBenchResult> {
  const log = options.progress ?? (() => {});
  const extraction = emptyTally();
  const dreamTally = emptyTally();
  const duplicates = { dedup: 0, merged: 0 };
  const evidence = { raw: [] as number[], extracted: [] as number[] };
  const injected = { raw: [] as number[], extracted: [] as number[] };
  let dialogTurns = 0;
  let factsAfterExtraction = 0;
  let factsAfterDream = 0;

  for (const conv of options.conversations) {
    const scope = userOf(conv);
    const units = conv.units.slice(0, options.turns ?? conv.units.length);
    const replayed = new Set(units.map((u) => u.id));
    dialogTurns += units.length;
    const clock = new ManualClock(Date.UTC(2023, 0, 1));
    const extracted = createInMemoryStores({ clock });
    const raw = createInMemoryStores({ clock });
    const kioku = new KiokuBuilder({ stores: extracted, model: options.model, clock }).build();
    // `<session id>/<turn>` → the dialog turn it replays; `fact:<id>` → the dialog turns a fact came from.
    const origin = new Map<string, string[]>();
    const sessionIds = new Map<number, string>();
    const turnIndex = new Map<string, number>();
    const batch = Math.max(1, options.batch ?? 1);
    // The turns not yet extracted, of one session: extracted when `batch` of them wait or the session ends.
    let pending: { sessionId: string; turns: { turn: number; text: string; id: string }[] } | undefined;
    const extractPending = async () => {
      if (!pending || pending.turns.length === 0) return;
      const { sessionId, turns } = pending;
      pending = { sessionId, turns: [] };
      const usage = new UsageLedger();
      const common = { stores: extracted, model: options.model, scope, sessionId, usage, clock };
      try {
        const result =
          batch === 1
            ? await extractAndStoreFacts({
                ...common,
                turn: turns[0]!.turn,
                messages: [{ role: 'user', content: turns[0]!.text }],
              })
            : await extractBatch({
                ...common,
                exchanges: turns.map((t) => ({ turn: t.turn, exchange: { user: t.text } })),
              });
        tally(extraction, result, usage);
        duplicates.dedup += (result.changeset.notes ?? []).filter((n) =>
          /^(Already known as|A proposed fact repeats another)/.test(n),
        ).length;
      } catch (error) {
        extraction.failures++;
        tally(extraction, undefined, usage);
        log(
          `  ${conv.sampleId} turns ${turns.map((t) => t.id).join(', ')}: extraction failed (${(error as Error).message.slice(0, 120)})`,
        );
      }
    };
    for (const [i, unit] of units.entries()) {
      const session = sessionOf(unit.id);
      if (!sessionIds.has(session)) sessionIds.set(session, (await extracted.sessions.create(scope)).id);
      const sessionId = sessionIds.get(session)!;
      const turn = turnIndex.get(sessionId) ?? 0;
      turnIndex.set(sessionId, turn + 1);
      origin.set(`${sessionId}/${turn}`, [unit.id]);
      clock.advance(60_000);
      await extracted.sessions.transcriptAppend(scope, sessionId, { role: 'user', content: unit.text });
      await raw.facts.create(scope, {
        content: unit.text,
        category: 'conversation',
        metadata: { dia_id: unit.id },
      });
      if (pending?.sessionId !== sessionId) {
        await extractPending();
        pending = { sessionId, turns: [] };
      }
      pending.turns.push({ turn, text: unit.text, id: unit.id });
      if (pending.turns.length >= batch) await extractPending();
      if ((i + 1) % 25 === 0) log(`  ${conv.sampleId}: ${i + 1} of ${units.length} turns read`);
    }
    await extractPending();
    const before = await extracted.facts.list(scope);
    factsAfterExtraction += before.length;
    for (const [id, turns] of turnsOfFacts(before, origin)) origin.set(`fact:${id}`, turns);

    log(`  ${conv.sampleId}: dreaming over ${before.length} facts`);
    const dreamt = await kioku.passes.dream({ scope });
    for (const pass of dreamt.passes) {
      if (pass.error) dreamTally.failures++;
      if (pass.changeset) {
        addOperations(dreamTally, pass.changeset);
        for (const op of pass.changeset.operations) {
          if (op.op === 'create')
            duplicates.merged += Math.max(0, (op.after.provenance.sourceIds?.length ?? 0) - 1);
        }
      }
    }
    dreamTally.inputTokens += dreamt.usage.total.inputTokens;
    dreamTally.outputTokens += dreamt.usage.total.outputTokens;
    const after = await extracted.facts.list(scope);
    factsAfterDream += after.length;
    const standsFor = turnsOfFacts(after, origin);

    for (const q of conv.questions) {
      if (!q.evidence.every((id) => replayed.has(id))) continue;
      const rawPrompt = await prepareQuestion(raw, scope, q.question, options.budget);
      const rawCovered = new Set(units.filter((u) => rawPrompt.prompt.includes(u.text)).map((u) => u.id));
      evidence.raw.push(score(q.evidence, rawCovered));
      injected.raw.push(rawPrompt.injected);
      const memPrompt = await prepareQuestion(extracted, scope, q.question, options.budget);
      const covered = new Set(
        after.filter((f) => memPrompt.prompt.includes(f.content)).flatMap((f) => standsFor.get(f.id) ?? []),
      );
      evidence.extracted.push(score(q.evidence, covered));
      injected.extracted.push(memPrompt.injected);
    }
    log(`  ${conv.sampleId} done`);
  }
  return {
    model: options.modelName,
    batch: Math.max(1, options.batch ?? 1),
    conversations: options.conversations.length,
    dialogTurns,
    questions: evidence.raw.length,
    factsAfterExtraction,
    factsAfterDream,
    duplicatesFound: duplicates,
    extraction,
    dream: dreamTally,
    evidencePct: {
      rawTurns: round(100 * mean(evidence.raw), 1),
      extracted: round(100 * mean(evidence.extracted), 1),
    },
    injectedTokens: {
      rawTurns: round(mean(injected.raw), 0),
      extracted: round(mean(injected.extracted), 0),
    },
  };
}

function report(r: LifecycleBenchResult): string {
  const ops = (t: PassTally) => `+${t.operations.create} ~${t.operations.update} -${t.operations.delete}`;
  return [
    `LoCoMo life-cycle quality: ${r.conversations} conversation(s), ${r.dialogTurns} dialog turns, ${r.questions} questions, model ${r.model}, extraction ${r.batch === 1 ? 'per turn' : `${r.batch} turns per call`}`,
    '',
    table(
      ['pass', 'operations', 'input tokens', 'output tokens', 'failures'],
      [
        [
          'extraction',
          ops(r.extraction),
          r.extraction.inputTokens,
          r.extraction.outputTokens,
          r.extraction.failures,
        ],
        ['dream', ops(r.dream), r.dream.inputTokens, r.dream.outputTokens, r.dream.failures],
      ],
    ),
    '',
    `facts stored: ${r.factsAfterExtraction} after extraction, ${r.factsAfterDream} after the dream (from ${r.dialogTurns} turns)`,
    `duplicates found: ${r.duplicatesFound.dedup} by dedup before store, ${r.duplicatesFound.merged} folded by the dream's merges`,
    '',
    table(
      ['memory', 'evidence in prompt %', 'tokens injected (mean)'],
      [
        [
          'raw turns as facts (bench:tokens long-term-fill)',
          r.evidencePct.rawTurns,
          r.injectedTokens.rawTurns,
        ],
        ['extracted + dreamt facts', r.evidencePct.extracted, r.injectedTokens.extracted],
      ],
    ),
  ].join('\n');
}

/** Must show (issue 25): batched extraction at most this many calls per user turn… */
export const MAX_CALLS_PER_TURN = 0.25;
/** …and at most this share of the per-turn path's prompt tokens per user turn. */
export const MAX_PROMPT_SHARE = 0.5;

function costReport(rows: readonly CostRow[], conversations: number, chosen: number): string {
  return [
    `LoCoMo extraction cost: ${conversations} conversation(s), ${rows[0]?.userTurns ?? 0} user turns, scripted model (deterministic), o200k tokens`,
    '',
    table(
      [
        'path',
        'calls',
        'of them reconciliation',
        'calls / user turn',
        'prompt tokens / user turn',
        '× per turn',
        'output tokens / user turn',
        'facts written',
        'failures',
      ],
      rows.map((r) => [
        r.path === `batch ${chosen}` ? `${r.path} (default)` : r.path,
        r.calls,
        r.reconcileCalls,
        r.callsPerTurn,
        r.promptTokensPerTurn,
        r.promptVsPerTurn,
        r.outputTokensPerTurn,
        r.facts,
        r.failures,
      ]),
    ),
    '',
    `targets: calls / user turn ≤ ${MAX_CALLS_PER_TURN} and prompt tokens / user turn ≤ ${MAX_PROMPT_SHARE} × per turn`,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = cliArgs();
  const json = args.includes('--json');
  const progress = json ? () => {} : (line: string) => console.error(line);
  const locomo = loadLocomo();
  const costConversations = locomo.slice(0, Number(flagValue(args, '--cost-conversations') ?? locomo.length));
  const batches = (flagValue(args, '--batches') ?? '4,8,16').split(',').map(Number);
  const triggers = (flagValue(args, '--triggers') ?? '4').split(',').filter(Boolean).map(Number);
  const rows = await runCostBench({ conversations: costConversations, batches, triggers, progress });
  console.log(costReport(rows, costConversations.length, SESSION_BATCH_DEFAULT));
  const within = (r: CostRow | undefined) =>
    r ? r.callsPerTurn <= MAX_CALLS_PER_TURN && r.promptVsPerTurn <= MAX_PROMPT_SHARE : undefined;
  const meets = within(rows.find((r) => r.path === `batch ${SESSION_BATCH_DEFAULT}`));
  if (meets !== undefined)
    console.log(`default batch ${SESSION_BATCH_DEFAULT}: ${meets ? 'meets' : 'MISSES'} both targets`);
  const outbox = rows.find((r) => r.path === OUTBOX_DEFAULTS_PATH);
  const outboxMeets = within(outbox);
  if (outbox)
    console.log(
      `outbox, in-process defaults (trigger ${outbox.triggerTurns} turns, passes of ${outbox.batch}): ${outboxMeets ? 'meets' : 'MISSES'} both targets`,
    );
  const cost = {
    conversations: costConversations.length,
    defaultBatch: SESSION_BATCH_DEFAULT,
    meets,
    outboxMeets,
    rows,
  };

  const modelName = flagValue(args, '--model');
  if (!modelName || (!process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL)) {
    const why = !modelName ? 'no --model given' : 'neither OPENAI_API_KEY nor OPENAI_BASE_URL is set';
    console.log(
      `\nquality skipped: ${why}. The quality figures (facts, dream, evidence in prompt) need a real model: --model <name> with OPENAI_BASE_URL (any OpenAI-compatible server) and/or OPENAI_API_KEY.`,
    );
    if (json)
      console.log(JSON.stringify({ bench: 'lifecycle', cost, quality: { skipped: true, reason: why } }));
    return;
  }
  const { OpenAIChatModel } = await import('@kioku/openai');
  const model = new OpenAIChatModel({ model: modelName, temperature: 0 });
  const turns = flagValue(args, '--turns');
  const result = await runLifecycleBench({
    model,
    modelName,
    conversations: locomo.slice(0, Number(flagValue(args, '--conversations') ?? 1)),
    ...(turns ? { turns: Number(turns) } : {}),
    batch: Number(flagValue(args, '--batch') ?? SESSION_BATCH_DEFAULT),
    budget: Number(flagValue(args, '--budget') ?? 2000),
    progress,
  });
  console.log(`\n${report(result)}`);
  if (json) console.log(JSON.stringify({ bench: 'lifecycle', cost, quality: result }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
