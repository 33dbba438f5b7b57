import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { shortId } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { CategorySchema, DEFAULT_CATEGORY, TagsSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { ChatMessage } from '../../model/messages.js';
import { generateObject, sumUsage, type UsageLedger } from '../../model/structured.js';
import { englishAnalyzer } from '../../search/analyzer.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { compareTexts, type DedupOption, resolveDedup } from '../../store/facts/near-duplicate.js';
import type { Fact, Provenance } from '../../store/facts/record.js';
import { type Changeset, draftOf, type FactOperation, newChangeset } from '../changesets/changeset.js';
import { ChangesetLog, type PassResult } from '../changesets/changeset-log.js';
import { factText, markUntrusted } from '../trust/quarantine.js';
import { SuppressionList } from '../trust/suppression.js';
import { type Exchange, lastExchange } from './exchange.js';
import { groundedInUser } from './grounding.js';
import { type Candidate, type Placed, placeCandidates } from './placement.js';

/*
 * Extraction: after a turn, a model proposes the durable facts of the exchange (the user's message and
 * the assistant's final answer, nothing else); each is compared with the user's similar facts (dedup
 * first, deterministic); the rest, when similar facts exist, are reconciled in one call (ADD / UPDATE /
 * DELETE / NOOP per fact, with ids of the facts shown). The outcome is a changeset of pass `extraction`.
 */

/** The longest fact an extraction keeps (a longer one is junk: a pasted document, a tool result). */
export const EXTRACTED_FACT_MAX_CHARS = 1000;
/** The most characters of each side of the exchange shown to the model. */
export const EXCHANGE_MAX_CHARS = 8000;
/** Defaults: candidates kept per exchange, and similar facts shown per candidate when reconciling. */
export const EXTRACTION_DEFAULTS = Object.freeze({ maxFacts: 10, similarPerFact: 3 });

const ReasonField = z.string().max(2000).optional();

/** What the extraction model answers. */
export const ExtractionOutputSchema = z.object({
  facts: z
    .array(
      z.object({
        /** One short, self-contained statement, e.g. "User lives in Berlin". */
        content: z.string().trim().min(1).max(EXTRACTED_FACT_MAX_CHARS),
        category: CategorySchema.default(DEFAULT_CATEGORY),
        tags: TagsSchema.default([]),
        /** When what it tells happened, if the exchange says: an ISO 8601 date or date-time. */
        eventTime: z.string().max(64).optional(),
      }),
    )
    .default([]),
});

export type ExtractionOutput = z.output<typeof ExtractionOutputSchema>;

/** What the reconciliation model answers: one decision per new fact (by its number). */
export const ReconciliationOutputSchema = z.object({
  decisions: z
    .array(
      z.object({
        /** The new fact's number in the list shown (1 = the first). */
        fact: z.number().int().min(1),
        event: z.enum(['ADD', 'UPDATE', 'DELETE', 'NOOP']),
        /** The existing memory an UPDATE or DELETE is about (its id as shown). */
        id: z.string().max(LIMITS.idChars).optional(),
        /** An UPDATE's new content for that memory. */
        content: z.string().trim().min(1).max(EXTRACTED_FACT_MAX_CHARS).optional(),
        /** True when the existing memory is no longer true (an UPDATE may then drop what it said). */
        outdated: z.boolean().optional(),
        reason: ReasonField,
      }),
    )
    .default([]),
});

export type ReconciliationOutput = z.output<typeof ReconciliationOutputSchema>;

/** The built-in extraction instructions; `directive` replaces them. */
export const DEFAULT_EXTRACTION_DIRECTIVE = `You extract durable facts about the user from one exchange between the user and an AI assistant, for the assistant's long-term memory.
Extract only what will still be useful in later conversations: what the user says about themselves, their life, the people in it, their work and projects, their plans, preferences and decisions.
Write each fact as one short, self-contained sentence in the third person ("User lives in Berlin", "User's daughter Mia started school in 2024"), with a slash-separated category (e.g. user-preferences/food, personal/family, project-context/<name>) and a few tags. When the exchange says when something happened, give that date as eventTime (ISO 8601, e.g. 2024-09-02).
Do not extract: what the assistant says about itself or its abilities; general knowledge; suggestions the user did not take up; one-off requests ("user asked for a poem"); greetings and small talk; things the assistant only repeats or recalls; instructions about this conversation only; passwords, keys or other secrets.
When nothing is worth remembering, answer with an empty list; that is often the right answer.`;

/** The built-in reconciliation instructions; `reconcileDirective` replaces them. */
export const DEFAULT_RECONCILIATION_DIRECTIVE = `You keep an AI assistant's memory about one user consistent. You get new facts from a conversation (numbered) and the existing memories most similar to them (numbered, each with its id).
For every new fact, give one decision:
- ADD: it is new information; it is stored as a new memory.
- UPDATE: it adds to or corrects an existing memory. Give that memory's id and its new content. The new content must keep everything the old memory says that is still true; only when the old memory is no longer true may it drop that, and then set outdated to true and say why in the reason.
- DELETE: it shows that an existing memory is no longer true and there is nothing new to store. Give that memory's id.
- NOOP: an existing memory already says it.
Give a short reason for every decision. Use only ids from the list of existing memories.`;

export interface ExtractOptions {
  stores: Pick<KiokuStores, 'facts' | 'sessions'>;
  model: ChatModel;
  /** The user (and agent) the facts belong to. */
  scope: Scope;
  /** The session the exchange is from (default: the scope's `threadId`), named in each fact's provenance. */
  sessionId?: string;
  /** The turn of the session (0 = its first user message), named in each fact's provenance. */
  turn?: number;
  /**
   * The turn's messages (or a whole prompt): only the last user message and the assistant's final answer
   * to it are read (see `lastExchange`).
   */
  messages: readonly ChatMessage[];
  /** Apply the changeset (default true) and keep it; `false` returns it for review, writing nothing. */
  apply?: boolean;
  /** Replaces the built-in extraction instructions. */
  directive?: string;
  /** Replaces the built-in reconciliation instructions. */
  reconcileDirective?: string;
  /** Dedup before store (default on, `DEDUP_THRESHOLD`); `false` sends every candidate to reconciliation. */
  dedup?: DedupOption;
  /** Candidates kept per exchange (default 10). */
  maxFacts?: number;
  /** Where applied changesets are kept (default: one over `stores.sessions`). */
  changesets?: ChangesetLog;
  clock?: Clock;
  /** The ledger of the pass: the model calls' usage is added to it. */
  usage?: UsageLedger;
  signal?: AbortSignal;
}

/**
 * Produce the extraction changeset of one exchange (see `ExtractOptions.messages`); nothing is written.
 * Ids the reconciliation names that are not among the facts it was shown (invented, or another user's)
 * are ignored and named in the notes; an UPDATE whose content drops what the old fact said, without
 * `outdated`, is turned into an ADD (noted), so an update never silently destroys information. Throws
 * `StructuredOutputError` (MODEL_OUTPUT) when a model's answer is not valid after a repair attempt.
 */
export async function extractFacts(options: ExtractOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const { scope } = options;
  const notes: string[] = [];
  const exchange = lastExchange(options.messages);
  if (!exchange) {
    notes.push('No user message to extract from.');
    return newChangeset('extraction', scope, [], { createdAt: isoAt(clock), notes });
  }
  const common = {
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const extracted = await generateObject(options.model, {
    ...common,
    schema: ExtractionOutputSchema,
    schemaName: 'memory_extraction',
    label: 'extraction:facts',
    messages: [
      { role: 'system', content: options.directive ?? DEFAULT_EXTRACTION_DIRECTIVE },
      { role: 'user', content: exchangePrompt(exchange) },
    ],
  });
  const spent = [extracted.usage];
  const maxFacts = options.maxFacts ?? EXTRACTION_DEFAULTS.maxFacts;
  const proposed = distinct(extracted.object.facts, notes);
  // What the user asked to forget stays forgotten, though the session still says it.
  const suppressed = await new SuppressionList(options.stores.sessions).matches(
    scope.userId,
    proposed.map((c) => c.content),
  );
  const remembered = proposed.filter((_, i) => !suppressed[i]);
  const dropped = proposed.length - remembered.length;
  if (dropped > 0) notes.push(`${dropped} proposed fact(s) the user had forgotten were not stored again.`);
  // Only what the user said: a candidate the assistant's answer alone supports (a quoted document, a
  // recalled memory) is not the user's fact.
  const candidates = remembered.filter((c) => {
    const grounding = groundedInUser(c.content, exchange);
    if (!grounding.grounded) notes.push(`Not said by the user (${grounding.reason}): ${oneLine(c.content)}`);
    return grounding.grounded;
  });
  if (candidates.length > maxFacts) {
    notes.push(`${candidates.length - maxFacts} proposed fact(s) beyond the first ${maxFacts} were dropped.`);
    candidates.length = maxFacts;
  }
  const provenance: Provenance = {
    source: 'extraction',
    ...sessionOf(options),
    ...(options.turn !== undefined ? { turn: options.turn } : {}),
  };
  const now = isoAt(clock);
  const placed = await placeCandidates(options.stores.facts, scope, candidates, {
    dedup: resolveDedup(options.dedup),
    similarPerFact: EXTRACTION_DEFAULTS.similarPerFact,
  });

  const operations: FactOperation[] = [];
  const touched = new Set<string>();
  const toReconcile: Placed[] = [];
  for (const p of placed) {
    if (p.decision === 'skipped' && p.match) {
      notes.push(`Already known as ${p.match.id}: ${oneLine(p.candidate.content)}`);
    } else if (p.decision === 'updated' && p.match && !touched.has(p.match.id)) {
      touched.add(p.match.id);
      operations.push(
        updateOp(p.match, p.candidate, provenance, `Says all that ${p.match.id} says, and more.`),
      );
    } else if (p.similar.length > 0) {
      toReconcile.push(p);
    } else {
      operations.push(createOp(p.candidate, provenance, now, 'A new fact from the conversation.'));
    }
  }

  if (toReconcile.length > 0) {
    const shown = shownFacts(toReconcile, touched);
    if (shown.length === 0) {
      for (const p of toReconcile)
        operations.push(createOp(p.candidate, provenance, now, 'A new fact from the conversation.'));
    } else {
      const reconciled = await generateObject(options.model, {
        ...common,
        schema: ReconciliationOutputSchema,
        schemaName: 'memory_reconciliation',
        label: 'extraction:reconcile',
        messages: [
          { role: 'system', content: options.reconcileDirective ?? DEFAULT_RECONCILIATION_DIRECTIVE },
          { role: 'user', content: reconciliationPrompt(toReconcile, shown) },
        ],
      });
      spent.push(reconciled.usage);
      operations.push(
        ...reconciliationOperations(
          toReconcile,
          shown,
          reconciled.object,
          { provenance, now, touched },
          notes,
        ),
      );
    }
  }
  const order = { create: 0, update: 1, delete: 2 } as const;
  operations.sort((a, b) => order[a.op] - order[b.op]);
  // A fact that reads like instructions is written quarantined, unless the user typed those words.
  for (const op of operations) {
    if (op.op !== 'delete') {
      op.after.provenance = markUntrusted(op.after.provenance, factText(op.after), {
        userText: exchange.user,
      });
    }
  }
  return newChangeset('extraction', scope, operations, { createdAt: now, usage: sumUsage(spent), notes });
}

/**
 * Extract the durable facts of one exchange and store them: the changeset of `extractFacts`, applied
 * with expected versions (a fact changed since it was read is a conflict, reported in `result`, never
 * overwritten) and kept in the changeset log, so it can be reverted by id. With `apply: false` the
 * changeset is only returned.
 */
export async function extractAndStoreFacts(options: ExtractOptions): Promise<PassResult> {
  return applyExtraction(options, await extractFacts(options));
}

/** Applies an extraction pass's changeset through the changeset log (unless `apply: false` or it is empty). */
export async function applyExtraction(
  options: Pick<ExtractOptions, 'apply' | 'changesets' | 'stores' | 'scope' | 'clock'>,
  changeset: Changeset,
): Promise<PassResult> {
  if (options.apply === false) return { changeset };
  if (changeset.operations.length === 0) return { changeset };
  const log = options.changesets ?? new ChangesetLog(options.stores.sessions);
  return log.apply(options.stores.facts, options.scope, changeset, isoAt(options.clock ?? systemClock));
}

/** The user message of the extraction request: the exchange, and nothing but it. */
export function exchangePrompt(exchange: Exchange): string {
  const lines = ['The exchange:', '<user>', cut(exchange.user), '</user>'];
  if (exchange.answer !== undefined) lines.push('<assistant>', cut(exchange.answer), '</assistant>');
  return lines.join('\n');
}

/** The user message of the reconciliation request: the new facts numbered, then the similar facts. */
export function reconciliationPrompt(candidates: readonly Placed[], shown: readonly Fact[]): string {
  const lines = [`New facts (${candidates.length}):`];
  candidates.forEach((p, i) => {
    lines.push(`${i + 1}. (${p.candidate.category}) ${oneLine(p.candidate.content)}`);
  });
  lines.push('', `Existing memories (${shown.length}):`);
  shown.forEach((f, i) => {
    const tags = f.tags.length > 0 ? ` [tags: ${f.tags.join(', ')}]` : '';
    lines.push(`${i + 1}. [${f.id}] (${f.category})${tags} ${oneLine(f.content)}`);
  });
  return lines.join('\n');
}

/** The reconciliation's decisions as operations; what is ignored or changed is noted. */
export function reconciliationOperations(
  candidates: readonly Placed[],
  shown: readonly Fact[],
  output: ReconciliationOutput,
  context: {
    /** One provenance for every candidate, or each candidate's own (a batch names each one's turn). */
    provenance: Provenance | ((candidate: number) => Provenance);
    now: string;
    touched: Set<string>;
  },
  notes: string[],
): FactOperation[] {
  const { now, touched } = context;
  const provenanceOf = (fact: number) =>
    typeof context.provenance === 'function' ? context.provenance(fact - 1) : context.provenance;
  const byId = new Map(shown.map((f) => [f.id, f]));
  const decided = new Set<number>();
  const unknown = new Set<string>();
  const operations: FactOperation[] = [];
  for (const d of output.decisions) {
    const p = candidates[d.fact - 1];
    if (!p) {
      notes.push(`A decision about new fact ${d.fact} was ignored: there are ${candidates.length}.`);
      continue;
    }
    if (decided.has(d.fact)) {
      notes.push(`A second decision about new fact ${d.fact} was ignored.`);
      continue;
    }
    decided.add(d.fact);
    const { candidate } = p;
    const provenance = provenanceOf(d.fact);
    const reason = d.reason?.trim() || undefined;
    if (d.event === 'NOOP') continue;
    if (d.event === 'ADD') {
      operations.push(createOp(candidate, provenance, now, reason ?? 'A new fact from the conversation.'));
      continue;
    }
    const target = d.id === undefined ? undefined : byId.get(d.id);
    if (!target) {
      if (d.id === undefined) notes.push(`The ${d.event} of new fact ${d.fact} names no memory; ignored.`);
      else unknown.add(d.id);
      continue;
    }
    if (touched.has(target.id)) {
      notes.push(
        `The ${d.event} of ${target.id} for new fact ${d.fact} was ignored: the memory is already changed.`,
      );
      continue;
    }
    if (d.event === 'DELETE') {
      touched.add(target.id);
      operations.push({ op: 'delete', before: target, reason: reason ?? 'No longer true.' });
      continue;
    }
    const content = d.content ?? candidate.content;
    if (d.outdated !== true && !keepsTerms(content, target.content)) {
      notes.push(
        `The update of ${target.id} would drop what it says without calling it outdated; new fact ${d.fact} is added instead.`,
      );
      operations.push(createOp(candidate, provenance, now, reason ?? 'A new fact from the conversation.'));
      continue;
    }
    touched.add(target.id);
    operations.push(
      updateOp(target, { ...candidate, content }, provenance, reason ?? `Updated from new fact ${d.fact}.`),
    );
  }
  candidates.forEach((p, i) => {
    if (!decided.has(i + 1)) {
      notes.push(
        `No decision about new fact ${i + 1}; nothing written for it: ${oneLine(p.candidate.content)}`,
      );
    }
  });
  if (unknown.size > 0) {
    notes.push(`Ignored ids that are not among the memories shown: ${[...unknown].join(', ')}.`);
  }
  return operations;
}

/** True when every term of the old text is in the new one (word order free: a merge may reorder). */
export function keepsTerms(newText: string, oldText: string): boolean {
  const terms = new Set(englishAnalyzer.terms(newText));
  return englishAnalyzer.terms(oldText).every((t) => terms.has(t));
}

/** The facts the reconciliation is shown: the candidates' similar facts, once each, untouched ones only. */
function shownFacts(placed: readonly Placed[], touched: ReadonlySet<string>): Fact[] {
  const out = new Map<string, Fact>();
  for (const p of placed) for (const f of p.similar) if (!touched.has(f.id)) out.set(f.id, f);
  return [...out.values()];
}

/** The candidates without the ones that restate an earlier one. */
export function distinct(facts: ExtractionOutput['facts'], notes: string[]): Candidate[] {
  const out: Candidate[] = [];
  for (const fact of facts) {
    const twin = out.find((c) => compareTexts(fact.content, c.content).decision === 'skipped');
    if (twin) notes.push(`A proposed fact repeats another and was dropped: ${oneLine(fact.content)}`);
    else {
      const eventTime = isoDate(fact.eventTime);
      out.push({
        content: fact.content,
        category: fact.category,
        tags: [...new Set(fact.tags)],
        ...(eventTime ? { eventTime } : {}),
      });
    }
  }
  return out;
}

/** A model's date as an ISO instant in UTC, or undefined when it is not one Date can read. */
export function isoDate(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const time = Date.parse(text);
  return Number.isFinite(time) ? new Date(time).toISOString() : undefined;
}

export function createOp(
  candidate: Candidate,
  provenance: Provenance,
  now: string,
  reason: string,
): FactOperation {
  return {
    op: 'create',
    after: {
      id: shortId(),
      content: candidate.content,
      category: candidate.category,
      tags: candidate.tags,
      metadata: {},
      provenance,
      ...(candidate.eventTime ? { eventTime: candidate.eventTime } : {}),
      createdAt: now,
    },
    reason,
  };
}

export function updateOp(
  before: Fact,
  candidate: Candidate,
  provenance: Provenance,
  reason: string,
): FactOperation {
  return {
    op: 'update',
    before,
    after: {
      ...draftOf(before),
      content: candidate.content,
      tags: [...new Set([...before.tags, ...candidate.tags])].slice(0, LIMITS.tagCount),
      provenance,
      ...(candidate.eventTime ? { eventTime: candidate.eventTime } : {}),
    },
    reason,
  };
}

function sessionOf(options: ExtractOptions): { sessionId?: string } {
  const sessionId = options.sessionId ?? options.scope.threadId;
  return sessionId === undefined ? {} : { sessionId };
}

export function cut(text: string): string {
  return text.length <= EXCHANGE_MAX_CHARS
    ? text
    : `${text.slice(0, EXCHANGE_MAX_CHARS)}… (${text.length - EXCHANGE_MAX_CHARS} more characters not shown)`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
