import { z } from 'zod';
import { type Clock, isoAt, systemClock } from '../../foundation/clock.js';
import { shortId } from '../../foundation/ids.js';
import { LIMITS } from '../../foundation/limits.js';
import { CategorySchema, DEFAULT_CATEGORY, TagsSchema } from '../../foundation/record-fields.js';
import type { Scope } from '../../foundation/scope.js';
import type { ChatModel } from '../../model/chat-model.js';
import { generateObject, type UsageLedger } from '../../model/structured.js';
import { englishAnalyzer } from '../../search/analyzer.js';
import type { KiokuStores } from '../../store/bundle/bundle.js';
import { compareTexts, type DedupOption, resolveDedup } from '../../store/facts/near-duplicate.js';
import type { Fact, Provenance } from '../../store/facts/record.js';
import { type ApplyResult, applyChangeset, revertChangeset } from '../changesets/apply.js';
import { type Changeset, draftOf, type FactOperation, newChangeset } from '../changesets/changeset.js';
import { ChangesetLog, type PassResult } from '../changesets/changeset-log.js';
import { changesetPass } from '../changesets/pass-telemetry.js';
import { placeCandidates } from '../extraction/placement.js';
import { isQuarantined } from '../trust/quarantine.js';

/*
 * Enrichment of a saved memory (save_memory): the raw content was saved at once; afterwards a
 * model expands it into focused, well-formed entries. The changeset creates the entries (linked to the
 * original by provenance) and deletes the original, all or nothing: if the original changed since it
 * was saved, or any entry cannot be written, nothing stays changed.
 */

/** The most entries one enrichment writes. */
export const ENRICHMENT_MAX_ENTRIES = 10;

/**
 * The least share of the saved memory's terms the entries (and the facts that already say some of them)
 * must hold for the original to be replaced. Entries paraphrase ("hates long answers" → "prefers short
 * answers"), so all of them cannot be asked for; under half means the model left most of it out.
 */
export const ENRICHMENT_MIN_COVERAGE = 0.5;

/** What the model answers. */
export const EnrichmentOutputSchema = z.object({
  entries: z
    .array(
      z.object({
        content: z.string().trim().min(1).max(LIMITS.factContentChars),
        category: CategorySchema.default(DEFAULT_CATEGORY),
        tags: TagsSchema.default([]),
      }),
    )
    .default([]),
});

export type EnrichmentOutput = z.output<typeof EnrichmentOutputSchema>;

/** The built-in memory rules (directive file `memory-rules.md`); `directive` replaces them. */
export const DEFAULT_MEMORY_RULES = `You turn a memory an AI assistant saved in a hurry into focused, well-formed long-term memory entries about the user.
Rules:
- One entry per distinct fact; each entry is a short, self-contained sentence that makes sense without the others ("User prefers metric units", not "Prefers them").
- Keep every piece of information of the saved memory; add nothing it does not say.
- Give each entry a hierarchical slash-separated category: user-preferences/<topic> for preferences, personal/<topic> for the user's life and people, project-context/<name> for projects, anti-patterns/<domain> for lessons about what not to do ("Don't [do X] for [reason Y] — instead [do Z]", tag anti-pattern), general otherwise.
- Give each entry a few lower-case tags to find it by.
- When the saved memory is already one focused, well-formed entry, answer with it unchanged.`;

export interface EnrichOptions {
  stores: Pick<KiokuStores, 'facts' | 'sessions'>;
  model: ChatModel;
  scope: Scope;
  /** The saved memory as it was saved (its version is the one the delete expects). */
  original: Fact;
  /** Replaces the built-in memory rules. */
  directive?: string;
  /** Dedup each entry against the user's other facts (default on). */
  dedup?: DedupOption;
  /** Default `ENRICHMENT_MIN_COVERAGE`; below it nothing changes. */
  minCoverage?: number;
  /** Apply the changeset (default true) and keep it; `false` returns it for review, writing nothing. */
  apply?: boolean;
  /** Where applied changesets are kept (default: one over `stores.sessions`). */
  changesets?: ChangesetLog;
  clock?: Clock;
  usage?: UsageLedger;
  signal?: AbortSignal;
}

/**
 * The enrichment changeset of a saved memory: a create per entry (provenance `enrichment`, `sourceIds`
 * = the original; the original's `createdAt`, metadata and session), dedup against the user's other
 * facts (an entry a fact already says is dropped, one that extends a fact updates it), and the delete of
 * the original at the version it was saved at. No entries, one entry equal to the original, or entries
 * that hold less than `minCoverage` of the original's terms change nothing. Throws `StructuredOutputError` (MODEL_OUTPUT) when the model's answer is not valid after a
 * repair attempt; nothing is written either way.
 */
export async function enrichmentChangeset(options: EnrichOptions): Promise<Changeset> {
  const clock = options.clock ?? systemClock;
  const { scope, original } = options;
  const notes: string[] = [];
  const reply = await generateObject(options.model, {
    schema: EnrichmentOutputSchema,
    schemaName: 'memory_entries',
    label: 'enrichment',
    messages: [
      { role: 'system', content: options.directive ?? DEFAULT_MEMORY_RULES },
      { role: 'user', content: enrichmentPrompt(original) },
    ],
    ...(options.usage ? { usage: options.usage } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const now = isoAt(clock);
  const done = (operations: FactOperation[]) =>
    newChangeset('enrichment', scope, operations, { createdAt: now, usage: reply.usage, notes });
  const entries: EnrichmentOutput['entries'] = [];
  for (const entry of reply.object.entries) {
    if (entries.some((e) => compareTexts(entry.content, e.content).decision === 'skipped')) {
      notes.push(`An entry repeats another and was dropped: ${entry.content}`);
    } else entries.push(entry);
  }
  if (entries.length > ENRICHMENT_MAX_ENTRIES) {
    notes.push(
      `${entries.length - ENRICHMENT_MAX_ENTRIES} entries beyond the first ${ENRICHMENT_MAX_ENTRIES} were dropped.`,
    );
    entries.length = ENRICHMENT_MAX_ENTRIES;
  }
  if (entries.length === 0) {
    notes.push('The model proposed no entries; the saved memory is kept as it is.');
    return done([]);
  }
  const [only] = entries;
  if (entries.length === 1 && only && sameAsOriginal(only, original)) {
    notes.push('The saved memory is already well-formed.');
    return done([]);
  }

  const provenance: Provenance = {
    source: 'enrichment',
    sourceIds: [original.id],
    ...(original.provenance.sessionId !== undefined ? { sessionId: original.provenance.sessionId } : {}),
    ...(original.provenance.turn !== undefined ? { turn: original.provenance.turn } : {}),
  };
  const placed = await placeCandidates(options.stores.facts, scope, entries, {
    dedup: resolveDedup(options.dedup),
    similarPerFact: 0,
    exclude: [original.id],
  });
  const covered = coverage(original.content, [
    ...entries.map((e) => e.content),
    ...placed.flatMap((p) => (p.decision === 'skipped' && p.match ? [p.match.content] : [])),
  ]);
  const minCoverage = options.minCoverage ?? ENRICHMENT_MIN_COVERAGE;
  if (covered < minCoverage) {
    notes.push(
      `The entries hold ${Math.round(covered * 100)}% of the saved memory's terms (at least ${Math.round(minCoverage * 100)}% needed); the saved memory is kept as it is.`,
    );
    return done([]);
  }
  const creates: FactOperation[] = [];
  const updates: FactOperation[] = [];
  const updated = new Set<string>();
  for (const p of placed) {
    const { candidate, match } = p;
    if (p.decision === 'skipped' && match) {
      notes.push(`Already known as ${match.id}: ${candidate.content}`);
    } else if (p.decision === 'updated' && match && !updated.has(match.id)) {
      updated.add(match.id);
      updates.push({
        op: 'update',
        before: match,
        after: {
          ...draftOf(match),
          content: candidate.content,
          tags: [...new Set([...match.tags, ...candidate.tags])].slice(0, LIMITS.tagCount),
          provenance,
        },
        reason: `Says all that ${match.id} says, and more (from saved memory ${original.id}).`,
      });
    } else {
      creates.push({
        op: 'create',
        after: {
          id: shortId(),
          content: candidate.content,
          category: candidate.category,
          tags: candidate.tags,
          metadata: original.metadata,
          provenance,
          createdAt: original.createdAt,
        },
        reason: `Expanded from saved memory ${original.id}.`,
      });
    }
  }
  return done([
    ...creates,
    ...updates,
    { op: 'delete', before: original, reason: 'Replaced by its well-formed entries.' },
  ]);
}

/** The user message of the enrichment request: the saved memory with its category and tags. */
export function enrichmentPrompt(original: Pick<Fact, 'content' | 'category' | 'tags'>): string {
  const tags = original.tags.length > 0 ? original.tags.join(', ') : '(none)';
  return [
    'The saved memory:',
    `Category: ${original.category}`,
    `Tags: ${tags}`,
    'Content:',
    original.content,
  ].join('\n');
}

/**
 * Enrich a saved memory: the changeset of `enrichmentChangeset`, applied all or nothing and kept. The
 * entries are written first and the original deleted last, expecting the version it was saved at; if
 * any write is a conflict (the user edited or deleted the original since, another writer changed a fact
 * an entry updates), what was written is undone, the original stays, and the conflicts are reported in
 * `result` (nothing is kept in the log). With `apply: false` the changeset is only returned.
 */
export function enrichMemory(options: EnrichOptions): Promise<PassResult> {
  return changesetPass(
    'enrichment',
    () => ({ 'kioku.fact.id': options.original.id }),
    () => enrich(options),
  );
}

async function enrich(options: EnrichOptions): Promise<PassResult> {
  const stale = await staleOriginal(options);
  if (stale) return stale;
  const changeset = await enrichmentChangeset(options);
  if (options.apply === false || changeset.operations.length === 0) return { changeset };
  const { facts } = options.stores;
  const { scope } = options;
  // The entries first; the original is deleted only when every one of them was written.
  const writes = changeset.operations.filter(
    (op) => op.op !== 'delete' || op.before.id !== options.original.id,
  );
  const removal = changeset.operations.filter((op) => !writes.includes(op));
  const first = await applyChangeset(facts, scope, { ...changeset, operations: writes });
  const last =
    first.conflicts.length === 0
      ? await applyChangeset(facts, scope, { ...changeset, operations: removal })
      : { applied: [], conflicts: [] };
  const result: ApplyResult = {
    applied: [...first.applied, ...last.applied],
    conflicts: [...first.conflicts, ...last.conflicts.map((c) => ({ ...c, index: c.index + writes.length }))],
  };
  if (result.conflicts.length > 0) {
    const undone = await revertChangeset(facts, scope, result.applied);
    return {
      changeset: {
        ...changeset,
        notes: [
          ...(changeset.notes ?? []),
          'Nothing was kept: a write was a conflict, so the saved memory stays as it is.',
        ],
      },
      result: {
        applied: result.applied.filter((op) => !undone.reverted.includes(op)),
        conflicts: [...result.conflicts, ...undone.conflicts],
      },
    };
  }
  const log = options.changesets ?? new ChangesetLog(options.stores.sessions);
  return log.keepApplied(scope, changeset, result, isoAt(options.clock ?? systemClock));
}

/** When the original changed or went since it was saved: the conflict, reported without a model call. */
async function staleOriginal(options: EnrichOptions): Promise<PassResult | null> {
  const { original, scope } = options;
  const current = await options.stores.facts.get(scope, original.id);
  if (current && current.version === original.version && !isQuarantined(current)) return null;
  const conflict = current
    ? {
        code: 'CONFLICT',
        message: `The saved memory "${original.id}" changed since it was saved (version ${original.version}, now ${current.version}); it is kept as it is.`,
      }
    : { code: 'NOT_FOUND', message: `The saved memory "${original.id}" no longer exists.` };
  const changeset = newChangeset('enrichment', scope, [], {
    createdAt: isoAt(options.clock ?? systemClock),
    notes: [conflict.message],
  });
  return {
    changeset,
    result: { applied: [], conflicts: [{ index: 0, op: 'delete', id: original.id, ...conflict }] },
  };
}

/** The share of the distinct terms of `text` found in `others`. */
function coverage(text: string, others: readonly string[]): number {
  const terms = new Set(englishAnalyzer.terms(text));
  if (terms.size === 0) return 1;
  const found = new Set(others.flatMap((o) => englishAnalyzer.terms(o)));
  let n = 0;
  for (const t of terms) if (found.has(t)) n++;
  return n / terms.size;
}

function sameAsOriginal(entry: EnrichmentOutput['entries'][number], original: Fact): boolean {
  return (
    entry.content === original.content.trim() &&
    entry.category === original.category &&
    entry.tags.join('\u0000') === original.tags.join('\u0000')
  );
}
