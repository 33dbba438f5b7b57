import { z } from 'zod';
import { ValidationError } from '../../foundation/errors.js';
import { LIMITS } from '../../foundation/limits.js';
import type { Scope } from '../../foundation/scope.js';
import { type Analyzer, englishAnalyzer } from '../../search/analyzer.js';
import type { Fact } from './record.js';
import type { FactStore } from './store.js';

/*
 * Dedup before store: is a new text already said by one of the user's facts (skip it), does it say what
 * a fact says and more (update that fact), or is it new (create it)? The candidates come from the fact
 * store's search (hybrid when the store has embeddings); the decision is deterministic, on the
 * analyzer's terms, so it is the same on every backend and without embeddings.
 *
 * A text is compared as a set of features: its terms (stop words dropped, stemmed, irregular verbs to
 * their base) and each pair of neighbouring terms. The pairs keep word order in play: "User lives in Chicago" shares every
 * term with "User's sister lives in Chicago", but not the pair "user live". Two guards the terms cannot
 * see: a negation on one side only ("likes" / "doesn't like") and a number on one side only ("2 cats" /
 * "3 cats") never make a near-duplicate.
 */

/**
 * The default share of a text's features that must be found in the other text: all of them. Measured on
 * the 84 LoCoMo-style pairs of core's paraphrase fixture (test/lifecycle/fixtures/paraphrases.ts): at 1 and
 * at 0.95, 72 decisions are right, 12 are duplicates (created where a model would see a restatement) and
 * none loses information; at 0.9 one distinct fact overwrites another, at 0.85 three, at 0.8 four, at
 * 0.7 twelve. Lexically a changed value ("jackets" → "shoes") and a synonym ("went" → "attended") look the
 * same, so any tolerance that catches the second loses the first in a long enough fact; 1 keeps dedup
 * lossless, and the duplicates it leaves are the dream's consolidation's to merge.
 */
export const DEDUP_THRESHOLD = 1;

/** Similar facts a dedup looks at (the top of the store's search for the new text). */
export const DEDUP_CANDIDATES = 5;

/** `skipped`: a fact already says it; `updated`: a fact said part of it (it gets the new text); `created`. */
export type DedupDecision = 'skipped' | 'updated' | 'created';

/** How one new text compares with one old text. */
export interface TextComparison {
  decision: DedupDecision;
  /** Share of the new text's features found in the old one (1: it adds nothing). */
  covered: number;
  /** Share of the old text's features found in the new one (1: it keeps everything the old one said). */
  kept: number;
}

export interface NearDuplicate {
  decision: DedupDecision;
  /** The fact that already says it (`skipped`) or that the new text extends (`updated`). */
  similar?: Fact;
  /** `covered` of a skip, `kept` of an update, the highest of either for a create. */
  similarity: number;
  /** The facts the search returned (the most similar first), e.g. for a reconciliation prompt. */
  hits: Fact[];
}

export interface NearDuplicateOptions {
  /** Default `DEDUP_THRESHOLD`. */
  threshold?: number;
  /** Facts of the search looked at (default `DEDUP_CANDIDATES`). */
  candidates?: number;
  /** Ids never chosen (e.g. the fact being replaced). */
  exclude?: readonly string[];
  analyzer?: Analyzer;
}

/** The dedup setting of a feature: `false` turns it off, `{ threshold }` tunes it. */
export const DedupOptionSchema = z
  .union([
    z.boolean(),
    z.object({
      threshold: z.number().gt(0).max(1).optional(),
      candidates: z.number().int().min(1).max(100).optional(),
    }),
  ])
  .optional();

export type DedupOption = z.input<typeof DedupOptionSchema>;

/** A dedup option resolved: the threshold and the number of similar facts looked at. */
export interface DedupSettings {
  threshold: number;
  candidates: number;
}

/** The settings of a dedup option, or null when it is off. */
export function resolveDedup(option: DedupOption): DedupSettings | null {
  if (option === false) return null;
  const given = option === true || option === undefined ? {} : option;
  const threshold = given.threshold ?? DEDUP_THRESHOLD;
  if (!(threshold > 0 && threshold <= 1)) {
    throw new ValidationError('A dedup threshold is a number greater than 0 and at most 1.', {
      details: { threshold },
    });
  }
  return { threshold, candidates: given.candidates ?? DEDUP_CANDIDATES };
}

interface Features {
  features: Set<string>;
  numbers: Set<string>;
  negated: boolean;
}

const NEGATION =
  /\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without|dont|doesnt|didnt|isnt|arent|wasnt|werent|wont|cant|couldnt|shouldnt|wouldnt|hasnt|havent|hadnt)\b|n't\b/;

function featuresOf(text: string, analyzer: Analyzer): Features {
  // Single letters ("a" is not a stop word of the analyzer) say nothing about a fact.
  const terms = analyzer.terms(text).filter((t) => t.length > 1 || /\d/.test(t));
  const features = new Set<string>(terms);
  for (let i = 1; i < terms.length; i++) features.add(`${terms[i - 1]} ${terms[i]}`);
  const numbers = new Set(terms.filter((t) => /\d/.test(t)));
  const negated = NEGATION.test(text.toLowerCase().replace(/’/g, "'"));
  return { features, numbers, negated };
}

function shareIn(a: Set<string>, b: Set<string>): number {
  if (a.size === 0) return 0;
  let found = 0;
  for (const f of a) if (b.has(f)) found++;
  return found / a.size;
}

function hasOwn(a: Set<string>, b: Set<string>): boolean {
  for (const x of a) if (!b.has(x)) return true;
  return false;
}

/**
 * Compare a new text with an old one at a threshold: `updated` when the new text keeps at least
 * `threshold` of the old one and adds more (more than it leaves out), `skipped` when at least `threshold`
 * of it is in the old one, `created` otherwise — and always `created` when only one side is negated, or
 * when the decision would drop a number only one side has.
 */
export function compareTexts(
  newText: string,
  oldText: string,
  threshold = DEDUP_THRESHOLD,
  analyzer: Analyzer = englishAnalyzer,
): TextComparison {
  const a = featuresOf(newText, analyzer);
  const b = featuresOf(oldText, analyzer);
  const covered = shareIn(a.features, b.features);
  const kept = shareIn(b.features, a.features);
  let decision: DedupDecision = 'created';
  if (a.features.size > 0 && b.features.size > 0 && a.negated === b.negated) {
    if (kept >= threshold && kept > covered && !hasOwn(b.numbers, a.numbers)) decision = 'updated';
    else if (covered >= threshold && !hasOwn(a.numbers, b.numbers)) decision = 'skipped';
  }
  return { decision, covered, kept };
}

/**
 * Look for a near-duplicate of `content` among the scope's facts: the top `candidates` of the store's
 * search for it, each compared with `compareTexts`. A skip wins over an update (the most similar of
 * each wins); without either the decision is `created`. Writes nothing.
 */
export async function findNearDuplicate(
  facts: FactStore,
  scope: Scope,
  content: string,
  options: NearDuplicateOptions = {},
): Promise<NearDuplicate> {
  const threshold = options.threshold ?? DEDUP_THRESHOLD;
  const found = await facts.search(scope, {
    query: content.slice(0, LIMITS.queryChars),
    limit: options.candidates ?? DEDUP_CANDIDATES,
  });
  const exclude = new Set(options.exclude ?? []);
  const hits = found.map((h) => h.fact).filter((f) => !exclude.has(f.id));
  return nearDuplicateAmong(hits, content, threshold, options.analyzer);
}

/** `findNearDuplicate` over facts already at hand (e.g. the hits of one search, or a changeset's creates). */
export function nearDuplicateAmong(
  facts: readonly Fact[],
  content: string,
  threshold = DEDUP_THRESHOLD,
  analyzer: Analyzer = englishAnalyzer,
): NearDuplicate {
  let skip: { fact: Fact; similarity: number } | undefined;
  let update: { fact: Fact; similarity: number } | undefined;
  let best = 0;
  for (const fact of facts) {
    const c = compareTexts(content, fact.content, threshold, analyzer);
    best = Math.max(best, c.covered, c.kept);
    if (c.decision === 'skipped' && (!skip || c.covered > skip.similarity))
      skip = { fact, similarity: c.covered };
    if (c.decision === 'updated' && (!update || c.kept > update.similarity))
      update = { fact, similarity: c.kept };
  }
  const hits = [...facts];
  if (skip) return { decision: 'skipped', similar: skip.fact, similarity: skip.similarity, hits };
  if (update) return { decision: 'updated', similar: update.fact, similarity: update.similarity, hits };
  return { decision: 'created', similarity: best, hits };
}
