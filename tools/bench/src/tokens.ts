/**
 * Tokens injected versus the full conversation, on LoCoMo: each conversation is replayed turn by turn
 * through Kioku, then every question is prepared as a turn with a 2,000-token memory budget, and the
 * bench checks which evidence turns made it into the prompt.
 *
 *   pnpm bench:tokens [--budget 2000] [--configs a,b] [--conversations 10] [--per-question] [--json]
 *
 * Ingestion (as a deployment would do it while the conversation goes on): one Kioku session per LoCoMo
 * session, each dialog turn recorded in that session's transcript (`Conversation.record`) and saved at
 * once as a fact in the user's long-term memory — content `<speaker> said, "<text>"` (+ ` and shared
 * <caption>`), category `conversation`, metadata `{ dia_id, session, date }`, timestamped with the
 * session's date. Questions come afterwards: each is prepared (never recorded, so delta injection does
 * not hide earlier answers' facts) in a new session, except for the replay-only row, which continues the
 * last dialog session. Budget: `maxTokens` = the question's own tokens + `--budget`, so the memory
 * blocks get exactly the budget.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type Clock,
  Conversation,
  conversationHistory,
  countMessagesTokens,
  defaultTokenizer,
  dynamicMemory,
  type FactStore,
  InMemoryFactStore,
  InMemorySessionStore,
  KiokuBuilder,
  longTermMemory,
  type MemoryFeature,
  memoryManager,
  type SessionStore,
} from '@kioku/core';
import { CATEGORY_NAMES, type Conversation as LocomoConversation, loadLocomo } from './locomo.js';
import { cliArgs, flagValue, mean, percentile, round, table } from './util.js';

interface Stores {
  facts: FactStore;
  sessions: SessionStore;
}

interface Setup {
  key: string;
  name: string;
  features(stores: Stores): MemoryFeature[];
  /** Ask in a new session, or continue the last dialog session (conversation replay). */
  thread: 'new' | 'dialog';
}

const SETUPS: Setup[] = [
  {
    key: 'replay',
    name: 'conversation replay only (last turns)',
    thread: 'dialog',
    features: (s) => [conversationHistory({ sessions: s.sessions })],
  },
  {
    key: 'dynamic',
    name: 'dynamic memory (newest first)',
    thread: 'new',
    features: (s) => [dynamicMemory({ store: s.facts, tools: false })],
  },
  {
    key: 'long-term',
    name: 'long-term recall, default (maxResults 8)',
    thread: 'new',
    features: (s) => [longTermMemory({ store: s.facts, sessions: s.sessions })],
  },
  {
    key: 'long-term-fill',
    name: 'long-term recall, maxResults 100 (fills the budget)',
    thread: 'new',
    features: (s) => [longTermMemory({ store: s.facts, sessions: s.sessions, maxResults: 100 })],
  },
  {
    key: 'memory-manager',
    name: 'memory manager, default (5, relevance ≥ 0.7)',
    thread: 'new',
    features: (s) => [memoryManager({ facts: s.facts, autoStore: false })],
  },
  {
    key: 'memory-manager-fill',
    name: 'memory manager, max 100, threshold 0',
    thread: 'new',
    features: (s) => [
      memoryManager({ facts: s.facts, autoStore: false, maxMemories: 100, relevanceThreshold: 0 }),
    ],
  },
];

interface QuestionResult {
  sampleId: string;
  question: string;
  category: number;
  injected: number;
  /** Items the middlewares included (facts, memories, turns). */
  items: number;
  full: number;
  evidence: number;
  present: number;
  /** |evidence present| / |evidence|, 1 when the question has no evidence (the recall protocol's rule). */
  score: number;
  prepareMs: number;
}

interface Summary {
  n: number;
  meanInjected: number;
  meanItems: number;
  compression: number;
  /** Mean per-question score, %. */
  evidencePct: number;
  /** Evidence turns present over all evidence turns, %. */
  turnsPct: number;
  /** Questions with every evidence turn present, %. */
  allPct: number;
}

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

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** `1:56 pm on 8 May, 2023` → epoch ms (UTC); undefined when the text has another shape. */
export function parseLocomoDate(text: string): number | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

const sessionOf = (diaId: string) => Number(/^D(\d+):/.exec(diaId)?.[1] ?? 0);

/** The whole conversation as a full-context prompt would hold it: dated session headers, then the turns. */
function fullText(conv: LocomoConversation): string {
  const parts: string[] = [];
  let current = -1;
  for (const unit of conv.units) {
    const session = sessionOf(unit.id);
    if (session !== current) {
      current = session;
      parts.push(`${parts.length ? '\n' : ''}Session ${session} (${conv.sessionDates[session] ?? '?'}):`);
    }
    parts.push(unit.text);
  }
  return parts.join('\n');
}

/** Replays one conversation into fresh stores; returns them and the last dialog session's id. */
async function ingest(conv: LocomoConversation): Promise<{ stores: Stores; lastSession: string }> {
  let now = 0;
  const clock: Clock = { now: () => now };
  const stores: Stores = {
    facts: new InMemoryFactStore({ clock }),
    sessions: new InMemorySessionStore({ clock }),
  };
  const kioku = new KiokuBuilder({ sessions: stores.sessions, clock }).build();
  const scope = { userId: conv.sampleId.replace(/[^A-Za-z0-9_.@+-]/g, '_') };
  let conversation: Conversation | undefined;
  let current = -1;
  let base = Date.UTC(2023, 0, 1);
  for (const unit of conv.units) {
    const session = sessionOf(unit.id);
    if (session !== current) {
      current = session;
      base = parseLocomoDate(conv.sessionDates[session] ?? '') ?? base + 86_400_000;
      now = base;
      conversation = await kioku.startConversation(scope);
    }
    now += 30_000; // half a minute per turn
    await conversation!.record([{ role: 'user', content: unit.text }]);
    await stores.facts.create(scope, {
      // A 12-hex-digit id like the store's random ones (same prompt cost), derived from the turn so
      // that runs are reproducible to the token.
      id: createHash('sha256').update(`${conv.sampleId}/${unit.id}`).digest('hex').slice(0, 12),
      content: unit.text,
      category: 'conversation',
      metadata: { dia_id: unit.id, session, date: conv.sessionDates[session] ?? null },
      provenance: { source: 'user', sessionId: conversation!.sessionId },
    });
  }
  return { stores, lastSession: conversation!.sessionId };
}

function summarise(results: readonly QuestionResult[]): Summary {
  const evidence = results.reduce((n, r) => n + r.evidence, 0);
  const present = results.reduce((n, r) => n + r.present, 0);
  const meanInjected = mean(results.map((r) => r.injected));
  return {
    n: results.length,
    meanInjected: round(meanInjected, 0),
    meanItems: round(mean(results.map((r) => r.items)), 1),
    compression: round(mean(results.map((r) => r.full)) / meanInjected, 1),
    evidencePct: round(100 * mean(results.map((r) => r.score)), 1),
    turnsPct: round((100 * present) / Math.max(1, evidence), 1),
    allPct: round((100 * results.filter((r) => r.present === r.evidence).length) / results.length, 1),
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
    const { stores, lastSession } = await ingest(conv);
    const scope = { userId: conv.sampleId.replace(/[^A-Za-z0-9_.@+-]/g, '_') };

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
      const features = setup.features(stores);
      const threadId = setup.thread === 'dialog' ? lastSession : (await stores.sessions.create(scope)).id;
      const results = bySetup.get(setup.key)!;
      for (const q of conv.questions) {
        const base = countMessagesTokens(defaultTokenizer, [{ role: 'user', content: q.question }]);
        const conversation = new Conversation({
          scope: { ...scope, threadId },
          sessions: stores.sessions,
          features,
          budget: { maxTokens: base + options.budget },
        });
        const start = performance.now();
        const prepared = await conversation.prepare(q.question);
        const prepareMs = performance.now() - start;
        const prompt = prepared.messages
          .slice(0, -1)
          .map((m) => m.content)
          .join('\n');
        const present = q.evidence.filter((id) => {
          const text = textOf.get(id);
          return text !== undefined && prompt.includes(text);
        }).length;
        results.push({
          sampleId: conv.sampleId,
          question: q.question,
          category: q.category,
          injected: prepared.ledger.totalTokens - prepared.ledger.baseTokens,
          items: prepared.ledger.entries.reduce((n, e) => n + e.included, 0),
          full,
          evidence: q.evidence.length,
          present,
          score: q.evidence.length === 0 ? 1 : present / q.evidence.length,
          prepareMs,
        });
      }
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
