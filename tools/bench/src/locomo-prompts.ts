/**
 * The LoCoMo prompt machinery bench:tokens and bench:intent share: ingestion of a conversation into Kioku
 * (transcripts and one fact per dialog turn), the configurations compared, and the evidence check of a
 * prepared prompt (which evidence turns' text it holds).
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type Clock,
  Conversation,
  conversationHistory,
  createInMemoryStores,
  defaultTokenizer,
  factMemory,
  type IntentClassifier,
  KiokuBuilder,
  type MemoryFeature,
  type PreparedTurn,
  type RecallMode,
} from '@kioku/core';
import { countMessagesTokens } from '@kioku/core/model';
import {
  type FactStore,
  InMemoryFactStore,
  InMemorySessionStore,
  type SessionStore,
  withRecallSignals,
} from '@kioku/core/store';
import { type Conversation as LocomoConversation, parseLocomoDate } from './locomo.js';
import { mean, round } from './util.js';

export interface Stores {
  facts: FactStore;
  sessions: SessionStore;
  /** `facts` as recall reads it: the store's search re-ranked by recall's signals (`RecallFactStore`). */
  recall: FactStore;
}

export interface Setup {
  key: string;
  name: string;
  features(stores: Stores): MemoryFeature[];
  /** Ask in a new session, or continue the last dialog session (conversation replay). */
  thread: 'new' | 'dialog';
}

export const SETUPS: Setup[] = [
  {
    key: 'replay',
    name: 'conversation replay only (last turns)',
    thread: 'dialog',
    features: (s) => [conversationHistory({ sessions: s.sessions })],
  },
  {
    key: 'dynamic',
    name: 'all facts (newest first)',
    thread: 'new',
    features: (s) => [factMemory({ facts: s.facts, tools: false })],
  },
  {
    key: 'fact-recall',
    name: 'fact recall, default (maxResults 8)',
    thread: 'new',
    features: (s) => [factMemory({ mode: 'recall', facts: s.recall, sessions: s.sessions })],
  },
  {
    key: 'fact-recall-fill',
    name: 'fact recall, maxResults 100 (fills the budget)',
    thread: 'new',
    features: (s) => [factMemory({ mode: 'recall', facts: s.recall, sessions: s.sessions, maxResults: 100 })],
  },
  {
    key: 'fact-recall-fill-lexical',
    name: 'the same, lexical search alone (no recall signals)',
    thread: 'new',
    features: (s) => [factMemory({ mode: 'recall', facts: s.facts, sessions: s.sessions, maxResults: 100 })],
  },
  {
    key: 'relevant-memory',
    name: 'relevant memory, default (5, relevance ≥ 0.7)',
    thread: 'new',
    features: (s) => [factMemory({ mode: 'relevant', facts: s.recall, autoStore: false })],
  },
  {
    key: 'relevant-memory-fill',
    name: 'relevant memory, max 100, threshold 0',
    thread: 'new',
    features: (s) => [
      factMemory({
        mode: 'relevant',
        facts: s.recall,
        autoStore: false,
        maxMemories: 100,
        relevanceThreshold: 0,
      }),
    ],
  },
  {
    key: 'memory-manager-fill-lexical',
    name: 'the same, lexical search alone (no recall signals)',
    thread: 'new',
    features: (s) => [
      factMemory({
        mode: 'relevant',
        facts: s.facts,
        autoStore: false,
        maxMemories: 100,
        relevanceThreshold: 0,
      }),
    ],
  },
];

export interface QuestionResult {
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

export interface Summary {
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

export const sessionOf = (diaId: string) => Number(/^D(\d+):/.exec(diaId)?.[1] ?? 0);

/** The whole conversation as a full-context prompt would hold it: dated session headers, then the turns. */
export function fullText(conv: LocomoConversation): string {
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
export async function ingest(conv: LocomoConversation): Promise<{ stores: Stores; lastSession: string }> {
  let now = 0;
  const clock: Clock = { now: () => now };
  const facts = new InMemoryFactStore({ clock });
  const stores: Stores = {
    facts,
    sessions: new InMemorySessionStore({ clock }),
    recall: withRecallSignals(facts, { clock }),
  };
  const kioku = new KiokuBuilder({
    stores: { ...createInMemoryStores({ clock }), facts: stores.facts, sessions: stores.sessions },
    clock,
  }).build();
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
      provenance: { source: 'user', sessionId: conversation!.sessionId, turn: unit.turn },
      eventTime: new Date(now).toISOString(),
    });
  }
  return { stores, lastSession: conversation!.sessionId };
}

export function summarise(results: readonly QuestionResult[]): Summary {
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

/** The user id a LoCoMo conversation is ingested under. */
export const userOf = (conv: LocomoConversation) => conv.sampleId.replace(/[^A-Za-z0-9_.@+-]/g, '_');

export interface AskOptions {
  /** The memory budget beside the question (the prompt's `maxTokens` is the question's tokens + this). */
  budget: number;
  /** The conversation's recall mode (default `always`, Kioku's default). */
  recall?: RecallMode;
  intent?: IntentClassifier;
  /** Told each prepared turn (the bench:intent reads the recall decision from it). */
  onPrepared?: (turn: PreparedTurn, question: LocomoConversation['questions'][number]) => void;
}

/**
 * Every question of the conversation prepared as a turn of `setup` (never recorded), and which of its
 * evidence turns' text the prompt holds (the memory blocks and history: everything before the question).
 */
export async function askQuestions(
  conv: LocomoConversation,
  ingested: { stores: Stores; lastSession: string },
  setup: Setup,
  options: AskOptions,
): Promise<QuestionResult[]> {
  const { stores, lastSession } = ingested;
  const scope = { userId: userOf(conv) };
  const full = defaultTokenizer.count(fullText(conv));
  const textOf = new Map(conv.units.map((u) => [u.id, u.text]));
  const features = setup.features(stores);
  const threadId = setup.thread === 'dialog' ? lastSession : (await stores.sessions.create(scope)).id;
  const results: QuestionResult[] = [];
  for (const q of conv.questions) {
    const base = countMessagesTokens(defaultTokenizer, [{ role: 'user', content: q.question }]);
    const conversation = new Conversation({
      scope: { ...scope, threadId },
      sessions: stores.sessions,
      features,
      budget: { maxTokens: base + options.budget },
      ...(options.recall ? { recall: options.recall } : {}),
      ...(options.intent ? { intent: options.intent } : {}),
    });
    const start = performance.now();
    const prepared = await conversation.prepare(q.question);
    const prepareMs = performance.now() - start;
    options.onPrepared?.(prepared, q);
    const present = evidencePresent(prepared, q.evidence, textOf);
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
  return results;
}

/** How many of the evidence turns' text the prompt holds before the user message. */
export function evidencePresent(
  prepared: PreparedTurn,
  evidence: readonly string[],
  textOf: ReadonlyMap<string, string>,
): number {
  const prompt = prepared.messages
    .slice(0, -1)
    .map((m) => m.content)
    .join('\n');
  return evidence.filter((id) => {
    const text = textOf.get(id);
    return text !== undefined && prompt.includes(text);
  }).length;
}
