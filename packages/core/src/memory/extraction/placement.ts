import { LIMITS } from '../../foundation/limits.js';
import type { Scope } from '../../foundation/scope.js';
import {
  type DedupDecision,
  type DedupSettings,
  nearDuplicateAmong,
} from '../../store/facts/near-duplicate.js';
import type { Fact } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { isQuarantined } from '../trust/quarantine.js';

/** A fact a model proposes to store. */
export interface Candidate {
  content: string;
  category: string;
  tags: string[];
  /** When what it tells happened, when the model gave a readable date (ISO, UTC). */
  eventTime?: string;
}

/** A candidate with what dedup decided and the user's facts most similar to it. */
export interface Placed {
  candidate: Candidate;
  decision: DedupDecision;
  /** The fact that already says it (`skipped`) or that it extends (`updated`). */
  match?: Fact;
  /** The top of the store's search for it (hybrid when the store has embeddings), most similar first. */
  similar: Fact[];
}

/**
 * Look up each candidate among the scope's facts: one search each, dedup on its top hits (when `dedup`
 * is given), and the top `similarPerFact` hits kept for a reconciliation. Facts in `exclude` are never
 * looked at (the fact an enrichment replaces). Writes nothing.
 */
export async function placeCandidates(
  facts: FactStore,
  scope: Scope,
  candidates: readonly Candidate[],
  options: {
    dedup: DedupSettings | null;
    similarPerFact: number;
    exclude?: readonly string[];
  },
): Promise<Placed[]> {
  const exclude = new Set(options.exclude ?? []);
  const limit = Math.max(options.similarPerFact, options.dedup?.candidates ?? 0, 1);
  const out: Placed[] = [];
  for (const candidate of candidates) {
    const found = await facts.search(scope, {
      query: candidate.content.slice(0, LIMITS.queryChars),
      limit: limit + exclude.size,
    });
    // Quarantined facts are never shown to the model, nor merged into or matched by a new fact.
    const hits = found.map((h) => h.fact).filter((f) => !exclude.has(f.id) && !isQuarantined(f));
    const similar = hits.slice(0, options.similarPerFact);
    if (!options.dedup) {
      out.push({ candidate, decision: 'created', similar });
      continue;
    }
    const near = nearDuplicateAmong(
      hits.slice(0, options.dedup.candidates),
      candidate.content,
      options.dedup.threshold,
    );
    out.push({
      candidate,
      decision: near.decision,
      ...(near.similar ? { match: near.similar } : {}),
      similar,
    });
  }
  return out;
}
