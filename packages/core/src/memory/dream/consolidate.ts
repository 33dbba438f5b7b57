import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { shortId } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { CategorySchema, TagsSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ChatModel } from '../../model/chat-model.js';
import { generateObject, type UsageLedger } from '../../model/structured.js';
import type { Fact } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { type Changeset, draftOf, type FactOperation, newChangeset } from '../changesets/changeset.js';
import { type FeedbackSignal, recentFeedback } from '../feedback/signal.js';
import { trustedFacts } from '../trust/quarantine.js';
import { type DreamProgressListener, notify } from './progress.js';

/*
 * Dream pass 1 — memory consolidation. The model sees all the user's facts (up to 1000),
 * numbered with id, category, tags and content, and the feedback of the last 7 days (up to 50); it
 * answers with merges, refinements, deletions and anti-patterns. The pass turns that into a changeset;
 * nothing is written here.
 */

/** The most facts one consolidation sees. */
export const CONSOLIDATION_MAX_FACTS = 1000;

const ReasonField = z.string().max(2000).optional();
const ContentField = z.string().trim().min(1).max(LIMITS.factContentChars);

/** What the model answers. Every list may be empty or absent. */
export const ConsolidationOutputSchema = z.object({
  merges: z
    .array(
      z.object({
        /** The facts merged into one; all of them are deleted. */
        sourceIds: z.array(z.string()).min(1),
        content: ContentField,
        category: CategorySchema,
        tags: TagsSchema,
        reason: ReasonField,
      }),
    )
    .default([]),
  refinements: z
    .array(
      z.object({
        id: z.string(),
        category: CategorySchema.optional(),
        tags: TagsSchema.optional(),
        reason: ReasonField,
      }),
    )
    .default([]),
  toDelete: z.array(z.object({ id: z.string(), reason: ReasonField })).default([]),
  antiPatterns: z
    .array(
      z.object({
        /** e.g. `file-operations`: the entry goes to `anti-patterns/file-operations`. */
        domain: z.string().min(1).max(100),
        /** "Don't [do X] for [reason Y] — instead [do Z]". */
        content: ContentField,
        reason: ReasonField,
      }),
    )
    .default([]),
});

export type ConsolidationOutput = z.output<typeof ConsolidationOutputSchema>;

/** The built-in instructions; `directive` replaces them (directive file `dream.md`). */
export const DEFAULT_CONSOLIDATION_DIRECTIVE = `You maintain an AI agent's long-term memory about one user. Review the numbered memory entries below for duplicates, near-duplicates, noisy and outdated content.
You may:
1. Merge duplicate or near-duplicate entries: give every merged entry's id in sourceIds and write one well-formed entry (content, category, tags) that keeps every distinct piece of information.
2. Refine categories and tags (refinements): hierarchical slash-separated categories such as user-preferences/timezone, project-context/<name>, general.
3. Delete noisy, wrong or redundant entries (toDelete).
4. From Correction feedback that shows a clear failure pattern, write anti-patterns: a domain (e.g. file-operations, email) and content of the form "Don't [do X] for [reason Y] — instead [do Z]".
Give a short reason for every change. Use only ids from the list. Change nothing that is fine as it is: empty lists are a good answer.`;

export interface ConsolidateOptions {
  facts: FactStore;
  model: ChatModel;
  scope: Scope;
  /** Feedback signals; only those of the last 7 days (up to 50) are shown. */
  feedback?: readonly FeedbackSignal[];
  /** Replaces the built-in instructions (directive file `dream.md`). */
  directive?: string;
  clock?: Clock;
  /** The ledger of the dream: the model call's usage is added to it. */
  usage?: UsageLedger;
  signal?: AbortSignal;
  /** Told when the pass starts reading and when it asks the model. */
  onProgress?: DreamProgressListener;
}

/**
 * Produce the consolidation changeset of the scope's facts. Enforces the **exhaustive deletion contract**:
 * every merge's sources are deleted along with `toDelete`, even those the model left out of `toDelete`.
 * Ids that are not among the facts shown (unknown, or another user's) are ignored and named in the
 * changeset's notes; merges get the earliest `createdAt` of their sources. Throws `StructuredOutputError`
 * (MODEL_OUTPUT) when the model's answer is not valid after a repair attempt; nothing is written either way.
 */
export async function consolidate(options: ConsolidateOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const { scope } = options;
  notify(options.onProgress, { pass: 'consolidation', stage: 'reading' });
  // Quarantined facts are never shown to the pass, so it cannot merge, refine or promote them.
  const facts = trustedFacts(
    await options.facts.list(scope, { order: 'oldest', limit: CONSOLIDATION_MAX_FACTS }),
  );
  const total = facts.length < CONSOLIDATION_MAX_FACTS ? facts.length : await options.facts.count(scope);
  const feedback = recentFeedback(options.feedback ?? [], clock.now());
  const notes: string[] = [];
  if (total > facts.length) notes.push(`Only the oldest ${facts.length} of ${total} facts were reviewed.`);
  const corrections = feedback.filter((f) => f.kind === 'correction');
  if (facts.length === 0 && corrections.length === 0) {
    return newChangeset('consolidation', scope, [], { createdAt: isoAt(clock), notes });
  }
  notify(options.onProgress, {
    pass: 'consolidation',
    stage: 'model',
    facts: facts.length,
    feedback: feedback.length,
  });
  const result = await generateObject(options.model, {
    schema: ConsolidationOutputSchema,
    schemaName: 'memory_consolidation',
    label: 'dream:consolidation',
    messages: [
      { role: 'system', content: options.directive ?? DEFAULT_CONSOLIDATION_DIRECTIVE },
      { role: 'user', content: consolidationPrompt(facts, feedback) },
    ],
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const now = isoAt(clock);
  const operations = consolidationOperations(
    facts,
    result.object,
    { hasCorrections: corrections.length > 0, now },
    notes,
  );
  return newChangeset('consolidation', scope, operations, { createdAt: now, usage: result.usage, notes });
}

/** The user message: the facts numbered with id, category, tags and content, then the feedback. */
export function consolidationPrompt(facts: readonly Fact[], feedback: readonly FeedbackSignal[]): string {
  const lines = [`Memory entries (${facts.length}):`];
  facts.forEach((f, i) => {
    const tags = f.tags.length > 0 ? ` [tags: ${f.tags.join(', ')}]` : '';
    lines.push(`${i + 1}. [${f.id}] (${f.category})${tags} ${oneLine(f.content)}`);
  });
  if (facts.length === 0) lines.push('(none)');
  lines.push('', `Recent feedback signals (last 7 days, ${feedback.length}):`);
  for (const f of feedback) lines.push(`- ${f.at} ${f.kind}: ${oneLine(f.text)}`);
  if (feedback.length === 0) lines.push('(none)');
  return lines.join('\n');
}

/**
 * The model's answer as operations: creates (merges, anti-patterns), then updates (refinements), then
 * deletes (the union of `toDelete` and every merge's sources). Problems go to `notes`.
 */
export function consolidationOperations(
  facts: readonly Fact[],
  output: ConsolidationOutput,
  context: { hasCorrections: boolean; now: string },
  notes: string[],
): FactOperation[] {
  const { hasCorrections, now } = context;
  const byId = new Map(facts.map((f) => [f.id, f]));
  const creates: FactOperation[] = [];
  const deletions = new Map<string, string>();
  const unknown = new Set<string>();
  const known = (id: string): boolean => {
    if (byId.has(id)) return true;
    unknown.add(id);
    return false;
  };

  for (const id of output.toDelete) {
    if (known(id.id)) deletions.set(id.id, id.reason || 'Deleted as noisy or redundant.');
  }

  for (const merge of output.merges) {
    const sources = [...new Set(merge.sourceIds)].filter(known).map((id) => byId.get(id)!);
    if (sources.length === 0) {
      notes.push(
        `A merge was ignored: none of its sources (${merge.sourceIds.join(', ')}) is one of the user's facts.`,
      );
      continue;
    }
    sources.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    const id = shortId();
    const sourceIds = sources.map((f) => f.id);
    creates.push({
      op: 'create',
      after: {
        id,
        content: merge.content,
        category: merge.category,
        tags: merge.tags,
        // Every source's metadata (flags such as requires_user_permission survive), the newest winning.
        metadata: Object.assign({}, ...sources.map((f) => f.metadata)),
        provenance: { source: 'consolidation', sourceIds },
        // Carry the earliest createdAt of the sources.
        createdAt: sources[0]!.createdAt,
      },
      reason: merge.reason || `Merges ${sourceIds.join(', ')}.`,
    });
    // The exhaustive deletion contract: every source goes, whether or not the model listed it in toDelete.
    for (const source of sourceIds)
      deletions.set(source, `Merged into ${id}.${merge.reason ? ` ${merge.reason}` : ''}`);
  }

  if (output.antiPatterns.length > 0 && !hasCorrections) {
    notes.push(
      `${output.antiPatterns.length} anti-pattern(s) ignored: there is no Correction feedback to learn them from.`,
    );
  } else {
    for (const anti of output.antiPatterns) {
      creates.push({
        op: 'create',
        after: {
          id: shortId(),
          content: anti.content,
          category: `anti-patterns/${domainSegment(anti.domain)}`,
          tags: ['anti-pattern'],
          metadata: {},
          provenance: { source: 'consolidation', note: 'anti-pattern from Correction feedback' },
          createdAt: now,
        },
        reason: anti.reason || 'Learned from Correction feedback.',
      });
    }
  }

  const refined = new Map<string, { category?: string; tags?: string[]; reason?: string }>();
  for (const r of output.refinements) {
    if (!known(r.id)) continue;
    if (deletions.has(r.id)) {
      notes.push(`The refinement of ${r.id} was dropped: the fact is deleted.`);
      continue;
    }
    const prior = refined.get(r.id) ?? {};
    refined.set(r.id, {
      ...prior,
      ...(r.category !== undefined ? { category: r.category } : {}),
      ...(r.tags !== undefined ? { tags: r.tags } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
    });
  }
  const updates: FactOperation[] = [];
  for (const [id, r] of refined) {
    const before = byId.get(id)!;
    const after = {
      ...draftOf(before),
      category: r.category ?? before.category,
      tags: r.tags ?? before.tags,
    };
    if (after.category === before.category && after.tags.join('\u0000') === before.tags.join('\u0000'))
      continue;
    updates.push({ op: 'update', before, after, reason: r.reason || 'Refined category and tags.' });
  }

  const deletes: FactOperation[] = [...deletions].map(([id, reason]) => ({
    op: 'delete',
    before: byId.get(id)!,
    reason,
  }));
  if (unknown.size > 0) {
    notes.push(`Ignored ids that are not among the user's facts: ${[...unknown].join(', ')}.`);
  }
  return [...creates, ...updates, ...deletes];
}

/** A model's domain name as one category segment: `File Operations` → `file-operations`. */
export function domainSegment(domain: string): string {
  const segment = domain
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+|[-.]+$/g, '')
    .replace(/\.{2,}/g, '.')
    .slice(0, 64);
  return segment === '' ? 'general' : segment;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
