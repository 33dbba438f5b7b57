import { z } from 'zod';
import { isoAt, systemClock } from '../../foundation/clock.js';
import { LIMITS } from '../../foundation/limits.js';
import { CategorySchema, DEFAULT_CATEGORY, TagsSchema } from '../../foundation/record-fields.js';
import { generateObject, sumUsage } from '../../model/structured.js';
import { compareTexts, resolveDedup } from '../../store/facts/near-duplicate.js';
import type { Fact, Provenance } from '../../store/facts/record.js';
import { defaultTokenizer } from '../../tokens/tokenizer.js';
import { type Changeset, type FactOperation, newChangeset } from '../changesets/changeset.js';
import type { PassResult } from '../changesets/changeset-log.js';
import { factText, isQuarantined, markUntrusted } from '../trust/quarantine.js';
import { SuppressionList } from '../trust/suppression.js';
import type { Exchange } from './exchange.js';
import {
  applyExtraction,
  createOp,
  cut,
  DEFAULT_RECONCILIATION_DIRECTIVE,
  EXTRACTED_FACT_MAX_CHARS,
  EXTRACTION_DEFAULTS,
  type ExtractOptions,
  isoDate,
  keepsTerms,
  oneLine,
  ReconciliationOutputSchema,
  reconciliationOperations,
  reconciliationPrompt,
  updateOp,
} from './extract.js';
import { groundedInUser } from './grounding.js';
import { type Candidate, type Placed, placeCandidates } from './placement.js';

/*
 * Batched extraction: one model call reads several exchanges of a session (each labelled with its turn)
 * and proposes their durable facts. Reconciliation is folded into that call: the user's facts most similar
 * to the batch's user messages are looked up first and shown with their ids, as many as fit a token budget,
 * and each proposed fact says whether it is new (ADD) or updates, deletes or repeats (UPDATE / DELETE /
 * NOOP) one of them. Only when some similar facts did not fit, and a new fact turns out to be similar to
 * one of those, does a second call reconcile it (the per-turn reconciliation, once for the batch) — so a
 * batch costs one call, and two only when the user's similar memory is larger than the budget.
 * Grounding, the suppression list, dedup, quarantine marking and the changeset log work as per turn.
 */

/** Defaults: similar facts looked up per exchange, and the tokens the shown facts may take in the call. */
export const BATCH_DEFAULTS = Object.freeze({ similarPerExchange: 5, similarTokens: 1500 });

const ReasonField = z.string().max(2000).optional();

/** What the batched extraction model answers: each fact with its turn and what it does to memory. */
export const BatchExtractionOutputSchema = z.object({
  facts: z
    .array(
      z.object({
        /** The turn of the exchange the fact comes from, as labelled. */
        turn: z.number().int().min(0),
        content: z.string().trim().min(1).max(EXTRACTED_FACT_MAX_CHARS),
        category: CategorySchema.default(DEFAULT_CATEGORY),
        tags: TagsSchema.default([]),
        eventTime: z.string().max(64).optional(),
        /** ADD (default): new; UPDATE / DELETE / NOOP: about the existing memory `id`. */
        event: z.enum(['ADD', 'UPDATE', 'DELETE', 'NOOP']).default('ADD'),
        id: z.string().max(LIMITS.idChars).optional(),
        /** True when the existing memory is no longer true (an UPDATE may then drop what it said). */
        outdated: z.boolean().optional(),
        reason: ReasonField,
      }),
    )
    .default([]),
});

export type BatchExtractionOutput = z.output<typeof BatchExtractionOutputSchema>;

/** The built-in batched extraction instructions; `directive` replaces the first paragraph's rules. */
export const DEFAULT_BATCH_EXTRACTION_DIRECTIVE = `You extract durable facts about the user from a few exchanges between the user and an AI assistant, for the assistant's long-term memory. Each exchange is labelled with its turn number.
Extract only what will still be useful in later conversations: what the user says about themselves, their life, the people in it, their work and projects, their plans, preferences and decisions.
Write each fact as one short, self-contained sentence in the third person ("User lives in Berlin", "User's daughter Mia started school in 2024"), with the turn of the exchange it comes from, a slash-separated category (e.g. user-preferences/food, personal/family, project-context/<name>) and a few tags. When the exchange says when something happened, give that date as eventTime (ISO 8601, e.g. 2024-09-02).
Do not extract: what the assistant says about itself or its abilities; general knowledge; suggestions the user did not take up; one-off requests ("user asked for a poem"); greetings and small talk; things the assistant only repeats or recalls; instructions about this conversation only; passwords, keys or other secrets.
When nothing is worth remembering, answer with an empty list; that is often the right answer.`;

/** How each fact relates to the existing memories shown (added to the directive when some are shown). */
export const BATCH_RECONCILIATION_RULES = `You also get the existing memories most similar to these exchanges, each with its id. For every fact, give an event:
- ADD: it is new information.
- UPDATE: it adds to or corrects an existing memory. Give that memory's id and, as content, its new content. The new content must keep everything the old memory says that is still true; only when the old memory is no longer true may it drop that, and then set outdated to true and say why in the reason.
- DELETE: it shows that an existing memory is no longer true and there is nothing new to store. Give that memory's id.
- NOOP: an existing memory already says it. Give its id.
Use only ids from the list of existing memories.`;

/** What `extractBatch` reads: `ExtractOptions` with several exchanges of one session instead of one turn's messages. */
export interface ExtractBatchOptions extends Omit<ExtractOptions, 'messages' | 'turn' | 'sessionId'> {
  /** The session the exchanges are from, named in each fact's provenance. */
  sessionId: string;
  /** The exchanges, oldest first, each with its turn (named in the provenance of the facts it gives). */
  exchanges: ReadonlyArray<{ turn: number; exchange: Exchange }>;
  /** Similar facts looked up per exchange (default 5). */
  similarPerExchange?: number;
  /** The most tokens the similar facts shown in the call may take (default 1500); the rest wait. */
  similarTokens?: number;
}

/**
 * The extraction changeset of several exchanges of one session, from one model call (two when the
 * user's similar facts did not all fit `similarTokens`; see the file comment); nothing is written. Each
 * fact's provenance names the turn the model gave it, which must be one of the batch's; a fact is checked
 * against that turn's exchange (grounding, quarantine). Ids the model names that were not shown are
 * ignored and named in the notes. Throws `StructuredOutputError` (MODEL_OUTPUT) when a model's answer is
 * not valid after a repair attempt.
 */
export async function extractBatchFacts(options: ExtractBatchOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const { scope } = options;
  const notes: string[] = [];
  const byTurn = new Map<number, Exchange>();
  for (const { turn, exchange } of options.exchanges) {
    if (exchange.user.trim() !== '') byTurn.set(turn, exchange);
  }
  if (byTurn.size === 0) {
    notes.push('No user message to extract from.');
    return newChangeset('extraction', scope, [], { createdAt: isoAt(clock), notes });
  }
  const common = {
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const similar = await similarFacts(options, [...byTurn.values()]);
  const budget = options.similarTokens ?? BATCH_DEFAULTS.similarTokens;
  const { shown, held } = fitBudget(similar, budget);
  if (held.length > 0) {
    notes.push(
      `${held.length} similar fact(s) did not fit the ${budget}-token budget of the batch call; new facts like them are reconciled in a second call.`,
    );
  }
  const system = [
    options.directive ?? DEFAULT_BATCH_EXTRACTION_DIRECTIVE,
    ...(shown.length > 0 ? [BATCH_RECONCILIATION_RULES] : []),
  ].join('\n\n');
  const extracted = await generateObject(options.model, {
    ...common,
    schema: BatchExtractionOutputSchema,
    schemaName: 'memory_extraction_batch',
    label: 'extraction:batch',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: batchPrompt(byTurn, shown) },
    ],
  });
  const spent = [extracted.usage];
  const now = isoAt(clock);
  const provenanceOf = (turn: number): Provenance => ({
    source: 'extraction',
    sessionId: options.sessionId,
    turn,
  });

  const shownById = new Map(shown.map((f) => [f.id, f]));
  const proposals = await screen(options, extracted.object.facts, byTurn, shownById, notes);
  const operations: FactOperation[] = [];
  const touched = new Set<string>();
  const unknown = new Set<string>();
  const added: Array<{ turn: number; candidate: Candidate; reason: string | undefined }> = [];
  for (const { fact, candidate } of proposals) {
    const provenance = provenanceOf(fact.turn);
    const reason = fact.reason?.trim() || undefined;
    if (fact.event === 'ADD') {
      added.push({ turn: fact.turn, candidate, reason });
      continue;
    }
    const target = fact.id === undefined ? undefined : shownById.get(fact.id);
    if (!target) {
      if (fact.id === undefined)
        notes.push(`The ${fact.event} of "${oneLine(fact.content)}" names no memory; ignored.`);
      else unknown.add(fact.id);
      continue;
    }
    if (fact.event === 'NOOP') {
      notes.push(`Already known as ${target.id}: ${oneLine(fact.content)}`);
      continue;
    }
    if (touched.has(target.id)) {
      notes.push(
        `The ${fact.event} of ${target.id} was ignored: the memory is already changed in this batch.`,
      );
      continue;
    }
    if (fact.event === 'DELETE') {
      touched.add(target.id);
      operations.push({ op: 'delete', before: target, reason: reason ?? 'No longer true.' });
      continue;
    }
    if (fact.outdated !== true && !keepsTerms(candidate.content, target.content)) {
      notes.push(
        `The update of ${target.id} would drop what it says without calling it outdated; it is added as a new fact instead.`,
      );
      added.push({ turn: fact.turn, candidate, reason });
      continue;
    }
    touched.add(target.id);
    operations.push(updateOp(target, candidate, provenance, reason ?? `Updated from turn ${fact.turn}.`));
  }
  if (unknown.size > 0) {
    notes.push(`Ignored ids that are not among the memories shown: ${[...unknown].join(', ')}.`);
  }

  // New facts: dedup against the store as per turn; one like a similar fact the call did not show waits
  // for the second call.
  const heldIds = new Set(held.map((f) => f.id));
  const placed = await placeCandidates(
    options.stores.facts,
    scope,
    added.map((a) => a.candidate),
    { dedup: resolveDedup(options.dedup), similarPerFact: EXTRACTION_DEFAULTS.similarPerFact },
  );
  const toReconcile: Array<{ placed: Placed; turn: number }> = [];
  placed.forEach((p, i) => {
    const { turn, reason } = added[i]!;
    if (p.decision === 'skipped' && p.match) {
      notes.push(`Already known as ${p.match.id}: ${oneLine(p.candidate.content)}`);
    } else if (p.decision === 'updated' && p.match && !touched.has(p.match.id)) {
      touched.add(p.match.id);
      operations.push(
        updateOp(p.match, p.candidate, provenanceOf(turn), `Says all that ${p.match.id} says, and more.`),
      );
    } else if (p.similar.some((f) => heldIds.has(f.id) && !touched.has(f.id))) {
      const unseen = p.similar.filter((f) => heldIds.has(f.id) && !touched.has(f.id));
      toReconcile.push({ placed: { ...p, similar: unseen }, turn });
    } else {
      operations.push(
        createOp(p.candidate, provenanceOf(turn), now, reason ?? 'A new fact from the conversation.'),
      );
    }
  });

  if (toReconcile.length > 0) {
    const candidates = toReconcile.map((r) => r.placed);
    const unseen = [...new Map(candidates.flatMap((p) => p.similar).map((f) => [f.id, f])).values()];
    const reconciled = await generateObject(options.model, {
      ...common,
      schema: ReconciliationOutputSchema,
      schemaName: 'memory_reconciliation',
      label: 'extraction:reconcile',
      messages: [
        { role: 'system', content: options.reconcileDirective ?? DEFAULT_RECONCILIATION_DIRECTIVE },
        { role: 'user', content: reconciliationPrompt(candidates, unseen) },
      ],
    });
    spent.push(reconciled.usage);
    operations.push(
      ...reconciliationOperations(
        candidates,
        unseen,
        reconciled.object,
        { provenance: (i) => provenanceOf(toReconcile[i]!.turn), now, touched },
        notes,
      ),
    );
  }

  const order = { create: 0, update: 1, delete: 2 } as const;
  operations.sort((a, b) => order[a.op] - order[b.op]);
  // A fact that reads like instructions is written quarantined, unless the user typed those words.
  for (const op of operations) {
    if (op.op !== 'delete') {
      const turn = op.after.provenance.turn;
      const userText = turn === undefined ? undefined : byTurn.get(turn)?.user;
      op.after.provenance = markUntrusted(op.after.provenance, factText(op.after), {
        ...(userText !== undefined ? { userText } : {}),
      });
    }
  }
  return newChangeset('extraction', scope, operations, { createdAt: now, usage: sumUsage(spent), notes });
}

/**
 * Extract the durable facts of several exchanges of one session and store them: the changeset of
 * `extractBatchFacts`, applied once with expected versions and kept in the changeset log (so the whole
 * batch reverts by one id). With `apply: false` the changeset is only returned.
 */
export async function extractBatch(options: ExtractBatchOptions): Promise<PassResult> {
  return applyExtraction(options, await extractBatchFacts(options));
}

/** The user message of the batched request: the exchanges by turn, then the existing memories shown. */
export function batchPrompt(exchanges: ReadonlyMap<number, Exchange>, shown: readonly Fact[]): string {
  const lines = ['The exchanges, oldest first:'];
  for (const [turn, exchange] of exchanges) {
    lines.push(`<exchange turn="${turn}">`, '<user>', cut(exchange.user), '</user>');
    if (exchange.answer) lines.push('<assistant>', cut(exchange.answer), '</assistant>');
    lines.push('</exchange>');
  }
  if (shown.length > 0) {
    lines.push('', `Existing memories (${shown.length}):`);
    for (const f of shown) lines.push(memoryLine(f));
  }
  return lines.join('\n');
}

function memoryLine(f: Fact): string {
  const tags = f.tags.length > 0 ? ` [tags: ${f.tags.join(', ')}]` : '';
  return `- [${f.id}] (${f.category})${tags} ${oneLine(f.content)}`;
}

/**
 * The user's facts most similar to the batch's user messages: one search per exchange, quarantined facts
 * left out, each fact once, ordered by its best rank in any search (so every exchange's best come first).
 */
async function similarFacts(options: ExtractBatchOptions, exchanges: readonly Exchange[]): Promise<Fact[]> {
  const per = options.similarPerExchange ?? BATCH_DEFAULTS.similarPerExchange;
  if (per <= 0) return [];
  const rank = new Map<string, { fact: Fact; rank: number }>();
  for (const exchange of exchanges) {
    const hits = await options.stores.facts.search(options.scope, {
      query: exchange.user.slice(0, LIMITS.queryChars),
      limit: per,
    });
    hits.forEach(({ fact }, i) => {
      if (isQuarantined(fact)) return;
      const known = rank.get(fact.id);
      if (!known || i < known.rank) rank.set(fact.id, { fact, rank: i });
    });
  }
  return [...rank.values()].sort((a, b) => a.rank - b.rank).map((r) => r.fact);
}

/** The facts that fit `budget` tokens as shown (in order), and the ones held back. */
function fitBudget(facts: readonly Fact[], budget: number): { shown: Fact[]; held: Fact[] } {
  const shown: Fact[] = [];
  const held: Fact[] = [];
  let used = 0;
  for (const f of facts) {
    const cost = defaultTokenizer.count(memoryLine(f)) + 1;
    if (held.length === 0 && used + cost <= budget) {
      shown.push(f);
      used += cost;
    } else held.push(f);
  }
  return { shown, held };
}

type ProposedFact = BatchExtractionOutput['facts'][number];

/**
 * The proposals worth acting on: a known turn, not a repeat of an earlier one, not suppressed, grounded in
 * what the user said in that turn, and at most `maxFacts` per exchange. What is dropped is noted.
 */
async function screen(
  options: ExtractBatchOptions,
  facts: readonly ProposedFact[],
  byTurn: ReadonlyMap<number, Exchange>,
  shown: ReadonlyMap<string, Fact>,
  notes: string[],
): Promise<Array<{ fact: ProposedFact; candidate: Candidate }>> {
  const known = facts.filter((f) => {
    if (byTurn.has(f.turn)) return true;
    notes.push(`A fact names turn ${f.turn}, which is not in the batch; dropped: ${oneLine(f.content)}`);
    return false;
  });
  const kept: Array<{ fact: ProposedFact; candidate: Candidate }> = [];
  for (const fact of known) {
    if (kept.some((k) => compareTexts(fact.content, k.candidate.content).decision === 'skipped')) {
      notes.push(`A proposed fact repeats another and was dropped: ${oneLine(fact.content)}`);
      continue;
    }
    const eventTime = isoDate(fact.eventTime);
    const candidate: Candidate = {
      content: fact.content,
      category: fact.category,
      tags: [...new Set(fact.tags)],
      ...(eventTime ? { eventTime } : {}),
    };
    kept.push({ fact, candidate });
  }
  const suppressed = await new SuppressionList(options.stores.sessions).matches(
    options.scope.userId,
    kept.map((k) => k.candidate.content),
  );
  const remembered = kept.filter((_, i) => !suppressed[i]);
  const dropped = kept.length - remembered.length;
  if (dropped > 0) notes.push(`${dropped} proposed fact(s) the user had forgotten were not stored again.`);
  const maxFacts = options.maxFacts ?? EXTRACTION_DEFAULTS.maxFacts;
  const perTurn = new Map<number, number>();
  const out: Array<{ fact: ProposedFact; candidate: Candidate }> = [];
  for (const k of remembered) {
    const exchange = byTurn.get(k.fact.turn)!;
    // An update restates the memory it extends: what that memory says counts as said.
    const target = k.fact.event === 'UPDATE' && k.fact.id ? shown.get(k.fact.id) : undefined;
    const grounding =
      k.fact.event === 'NOOP'
        ? { grounded: true as const }
        : groundedInUser(
            k.candidate.content,
            target ? { ...exchange, user: `${exchange.user}\n${target.content}` } : exchange,
          );
    if (!grounding.grounded) {
      notes.push(`Not said by the user (${grounding.reason}): ${oneLine(k.candidate.content)}`);
      continue;
    }
    const n = (perTurn.get(k.fact.turn) ?? 0) + 1;
    perTurn.set(k.fact.turn, n);
    if (n > maxFacts) {
      notes.push(`A fact of turn ${k.fact.turn} beyond the first ${maxFacts} was dropped.`);
      continue;
    }
    out.push(k);
  }
  return out;
}
