/**
 * The cost of extraction on LoCoMo, per-turn path beside batched paths, with a deterministic scripted
 * model (no endpoint, no randomness): every dialog turn is a user turn; the per-turn path runs
 * `extractAndStoreFacts` after each (extraction, then reconciliation when the user has similar facts);
 * a batched path runs `extractBatch` over `n` turns of a LoCoMo session at a time (a session's last
 * batch may be shorter: it is flushed when the session ends). Reported per user turn: memory-model
 * calls, prompt and output tokens (core's o200k tokenizer: the scripted model reports no usage, so
 * `generateObject` counts the whole request, JSON-schema instruction included) and facts written.
 * The outbox row runs the same turns through a Kioku conversation with `withExtraction()` at its
 * defaults (trigger and pass size), i.e. what the in-process path costs.
 */
import {
  type ChatModel,
  type ChatModelReply,
  type ChatModelRequest,
  createInMemoryStores,
  KiokuBuilder,
} from '@kioku/core';
import { UsageLedger } from '@kioku/core/model';
import {
  EXTRACTION_TRIGGER_DEFAULTS,
  type ExtractionTrigger,
  extractAndStoreFacts,
  extractBatch,
  OUTBOX_DEFAULTS,
} from '@kioku/core/passes';
import { ManualClock } from '@kioku/core/testing';
import type { Conversation } from './locomo.js';
import { round } from './util.js';

/** The most facts the scripted extractor proposes per turn. */
const FACTS_PER_TURN = 2;
/** Sentences shorter than this (in words) are small talk to the scripted extractor. */
const MIN_WORDS = 6;

/** What the user said in a LoCoMo unit (`Name said, "…"`, maybe ` and shared …`). */
function saidIn(text: string): string {
  return /said, "([\s\S]*)"/.exec(text)?.[1] ?? text;
}

/** The scripted extractor's facts of one user message: its first long statements, as the user's words. */
export function scriptedFacts(text: string): string[] {
  return saidIn(text)
    .split(/(?<=[.!])\s+/)
    .map((s) => s.trim())
    .filter((s) => !s.includes('?') && s.split(/\s+/).length >= MIN_WORDS)
    .slice(0, FACTS_PER_TURN)
    .map((s) => `User said: ${s.slice(0, 300)}`);
}

const normal = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * A model that answers each memory pass deterministically from its prompt: extraction (per turn or
 * batched) proposes `scriptedFacts` of each user message; reconciliation, and the batched call's
 * event, say NOOP when a shown memory says exactly the same and ADD otherwise. It counts its calls.
 */
export class ScriptedExtractor implements ChatModel {
  calls = 0;

  async complete(request: ChatModelRequest): Promise<ChatModelReply> {
    this.calls++;
    const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
    const prompt = request.messages.at(-1)?.content ?? '';
    const schema = /JSON object named (\S+)/.exec(system)?.[1];
    const shown = new Map<string, string>();
    for (const m of prompt.matchAll(/^(?:- |\d+\. )\[([^\]]+)\] \([^)]*\)(?: \[tags: [^\]]*\])? (.*)$/gm)) {
      shown.set(normal(m[2]!), m[1]!);
    }
    let answer: unknown = {};
    if (schema === 'memory_extraction') {
      const user = /<user>\n([\s\S]*?)\n<\/user>/.exec(prompt)?.[1] ?? '';
      answer = { facts: scriptedFacts(user).map((content) => ({ content, category: 'conversation' })) };
    } else if (schema === 'memory_extraction_batch') {
      const facts = [];
      for (const m of prompt.matchAll(/<exchange turn="(\d+)">\n<user>\n([\s\S]*?)\n<\/user>/g)) {
        for (const content of scriptedFacts(m[2]!)) {
          const known = shown.get(normal(content));
          facts.push({
            turn: Number(m[1]),
            content,
            category: 'conversation',
            ...(known ? { event: 'NOOP', id: known } : { event: 'ADD' }),
          });
        }
      }
      answer = { facts };
    } else if (schema === 'memory_reconciliation') {
      const count = Number(/^New facts \((\d+)\):/m.exec(prompt)?.[1] ?? 0);
      const news = [...prompt.matchAll(/^(\d+)\. \([^)]*\) (.*)$/gm)].slice(0, count);
      answer = {
        decisions: news.map((m) => {
          const known = shown.get(normal(m[2]!));
          return known
            ? { fact: Number(m[1]), event: 'NOOP', id: known, reason: 'Already known.' }
            : { fact: Number(m[1]), event: 'ADD', reason: 'New.' };
        }),
      };
    }
    return { role: 'assistant', content: JSON.stringify(answer) };
  }
}

export interface CostRow {
  /** `per turn`, `batch n` or `outbox, …` (the in-process path). */
  path: string;
  /** Turns one call reads at most (for the outbox: one pass). */
  batch: number;
  /** The outbox path only: the new turns that start a drain. */
  triggerTurns?: number;
  userTurns: number;
  calls: number;
  /** Reconciliation calls (per turn: when similar facts exist; batched: only past the similar-facts budget). */
  reconcileCalls: number;
  promptTokens: number;
  outputTokens: number;
  facts: number;
  failures: number;
  callsPerTurn: number;
  promptTokensPerTurn: number;
  outputTokensPerTurn: number;
  /** Prompt tokens per user turn ÷ the per-turn path's. */
  promptVsPerTurn: number;
}

const userOf = (conv: Conversation) => ({ userId: conv.sampleId.replace(/[^A-Za-z0-9_.@+-]/g, '_') });

/** One path (batch 1 = per turn) over the conversations, each in fresh in-memory stores. */
async function runPath(
  conversations: readonly Conversation[],
  batch: number,
  turns: number | undefined,
): Promise<Omit<CostRow, 'promptVsPerTurn'>> {
  const model = new ScriptedExtractor();
  const usage = new UsageLedger();
  let userTurns = 0;
  let facts = 0;
  let failures = 0;
  for (const conv of conversations) {
    const scope = userOf(conv);
    const clock = new ManualClock(Date.UTC(2023, 0, 1));
    const stores = createInMemoryStores({ clock });
    const units = conv.units.slice(0, turns ?? conv.units.length);
    userTurns += units.length;
    const sessions = new Map<number, typeof units>();
    for (const unit of units) sessions.set(unit.session, [...(sessions.get(unit.session) ?? []), unit]);
    for (const session of sessions.values()) {
      const sessionId = (await stores.sessions.create(scope)).id;
      const step = Math.max(1, batch);
      for (let i = 0; i < session.length; i += step) {
        const chunk = session.slice(i, i + step);
        clock.advance(60_000 * chunk.length);
        const common = { stores, model, scope, sessionId, usage, clock };
        try {
          if (batch <= 1) {
            await extractAndStoreFacts({
              ...common,
              turn: i,
              messages: [{ role: 'user', content: chunk[0]!.text }],
            });
          } else {
            await extractBatch({
              ...common,
              exchanges: chunk.map((unit, j) => ({ turn: i + j, exchange: { user: unit.text } })),
            });
          }
        } catch {
          failures++;
        }
      }
    }
    facts += await stores.facts.count(scope);
    await stores.close();
  }
  const { inputTokens, outputTokens } = usage.total;
  return {
    path: batch <= 1 ? 'per turn' : `batch ${batch}`,
    batch: Math.max(1, batch),
    userTurns,
    calls: model.calls,
    reconcileCalls: usage.entries.filter((e) => e.label === 'extraction:reconcile').length,
    promptTokens: inputTokens,
    outputTokens,
    facts,
    failures,
    callsPerTurn: round(model.calls / userTurns, 3),
    promptTokensPerTurn: round(inputTokens / userTurns, 1),
    outputTokensPerTurn: round(outputTokens / userTurns, 1),
  };
}

/** The path name of the outbox row at `withExtraction()`'s defaults. */
export const OUTBOX_DEFAULTS_PATH = 'outbox, in-process defaults';

/** The chat model of the outbox path: an empty answer, so each exchange is the user's words only. */
const silentChat: ChatModel = {
  async complete() {
    return { role: 'assistant', content: '' };
  },
};

/**
 * The in-process path: each LoCoMo session is a Kioku conversation with `withExtraction({ trigger })`
 * (defaults unless given), one `run` per dialog turn; after each turn the background queue is let finish
 * (a drain takes far less than a user takes to type the next message), and at a session's end
 * `kioku.flush()` stands for the idle trigger (LoCoMo's sessions are days apart).
 */
async function runOutboxPath(
  conversations: readonly Conversation[],
  turns: number | undefined,
  trigger: ExtractionTrigger | undefined,
): Promise<Omit<CostRow, 'promptVsPerTurn'>> {
  const model = new ScriptedExtractor();
  const usage = new UsageLedger();
  let userTurns = 0;
  let facts = 0;
  let failures = 0;
  for (const conv of conversations) {
    const scope = userOf(conv);
    const clock = new ManualClock(Date.UTC(2023, 0, 1));
    const stores = createInMemoryStores({ clock });
    const kioku = new KiokuBuilder({
      stores,
      model,
      clock,
      background: {
        onEvent: (e) => {
          if (e.type === 'failed') failures++;
        },
      },
    })
      .withExtraction({ usage, recover: false, ...(trigger ? { trigger } : {}) })
      .build();
    const units = conv.units.slice(0, turns ?? conv.units.length);
    userTurns += units.length;
    const sessions = new Map<number, typeof units>();
    for (const unit of units) sessions.set(unit.session, [...(sessions.get(unit.session) ?? []), unit]);
    for (const session of sessions.values()) {
      const convo = await kioku.startConversation(scope);
      for (const unit of session) {
        clock.advance(60_000);
        await convo.run(unit.text, silentChat);
        while (kioku.background.pending > 0) await new Promise((r) => setImmediate(r));
      }
      await kioku.flush();
    }
    facts += await stores.facts.count(scope);
    await kioku.close();
    await stores.close();
  }
  const { inputTokens, outputTokens } = usage.total;
  const triggerTurns = trigger?.turns ?? EXTRACTION_TRIGGER_DEFAULTS.turns;
  return {
    path: trigger?.turns === undefined ? OUTBOX_DEFAULTS_PATH : `outbox, trigger ${triggerTurns}`,
    batch: OUTBOX_DEFAULTS.turnsPerPass,
    triggerTurns,
    userTurns,
    calls: model.calls,
    reconcileCalls: usage.entries.filter((e) => e.label === 'extraction:reconcile').length,
    promptTokens: inputTokens,
    outputTokens,
    facts,
    failures,
    callsPerTurn: round(model.calls / userTurns, 3),
    promptTokensPerTurn: round(inputTokens / userTurns, 1),
    outputTokensPerTurn: round(outputTokens / userTurns, 1),
  };
}

/**
 * The per-turn path, each batch size and the outbox (in-process defaults, then each of `triggers` new
 * turns per drain), side by side in one run.
 */
export async function runCostBench(options: {
  conversations: readonly Conversation[];
  batches: readonly number[];
  triggers?: readonly number[];
  turns?: number;
  progress?: (line: string) => void;
}): Promise<CostRow[]> {
  const rows: CostRow[] = [];
  let baseline = 0;
  const add = (row: Omit<CostRow, 'promptVsPerTurn'>) => {
    rows.push({ ...row, promptVsPerTurn: round(row.promptTokensPerTurn / baseline, 3) });
    options.progress?.(`  ${row.path}: ${row.calls} calls, ${row.promptTokens} prompt tokens`);
  };
  for (const batch of [1, ...options.batches.filter((b) => b > 1)]) {
    const row = await runPath(options.conversations, batch, options.turns);
    if (batch === 1) baseline = row.promptTokensPerTurn;
    add(row);
  }
  add(await runOutboxPath(options.conversations, options.turns, undefined));
  for (const turns of options.triggers ?? []) {
    add(await runOutboxPath(options.conversations, options.turns, { turns }));
  }
  return rows;
}
