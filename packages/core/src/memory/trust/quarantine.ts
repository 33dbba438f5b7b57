import { NotFoundError, ValidationError } from '../../foundation/errors.js';
import type { Scope } from '../../foundation/scope.js';
import type { Fact, Provenance, ProvenanceSource, QuarantineMark } from '../../store/facts/record.js';
import type { FactStore } from '../../store/facts/store.js';
import { type DetectOptions, detectInjection } from './detector.js';
import { noteQuarantined } from './quarantine-telemetry.js';

/*
 * Quarantine: a fact whose text reads like instructions to a model and that did not come from the user is
 * stored with `provenance.quarantine`. Recall, injection, memory tools and the life-cycle passes skip it
 * (`isQuarantined`, `trustedFacts`) until the user confirms it (`confirmQuarantined`) or drops it.
 */

/**
 * Sources whose text is checked: everything a model or a tool wrote. What the user or the app wrote
 * (`user`) and imports (records that already carry their marks) are trusted as they are.
 */
const CHECKED_SOURCES: ReadonlySet<ProvenanceSource> = new Set([
  'assistant',
  'tool',
  'extraction',
  'enrichment',
  'consolidation',
]);

/**
 * The reason a mark gives when the flagged text is in what the user pasted or quoted: the user's own words
 * are trusted, what they carry in is held until they confirm it.
 */
export const PASTED_REASON = 'from text you pasted: it reads like instructions to an AI';

/** True while the fact is quarantined. */
export function isQuarantined(fact: Pick<Fact, 'provenance'>): boolean {
  return fact.provenance.quarantine !== undefined;
}

/** The facts that may reach a prompt, a tool result or a life-cycle pass. */
export function trustedFacts<T extends Pick<Fact, 'provenance'>>(facts: readonly T[]): T[] {
  return facts.filter((fact) => !isQuarantined(fact));
}

/**
 * `provenance` with a quarantine mark when its source is checked and `text` is flagged by the detector;
 * unchanged otherwise (a mark already there stays). `userText`: what the user typed in the same exchange.
 */
export function markUntrusted(provenance: Provenance, text: string, options: DetectOptions = {}): Provenance {
  if (provenance.quarantine || !CHECKED_SOURCES.has(provenance.source)) return provenance;
  const verdict = detectInjection(text, options);
  if (!verdict.flagged) return provenance;
  const mark: QuarantineMark = {
    score: verdict.score,
    hits: verdict.hits,
    ...(verdict.pasted ? { reason: PASTED_REASON } : {}),
  };
  noteQuarantined(provenance.source, verdict.hits);
  return { ...provenance, quarantine: mark };
}

/** A fact's text as the detector reads it. */
export function factText(fact: { title?: string | undefined; content: string }): string {
  return fact.title === undefined ? fact.content : `${fact.title}: ${fact.content}`;
}

/** Why a fact is quarantined, in one line: `score 6: ignore-instructions ("Ignore all previous…"), …`. */
export function explainMark(mark: QuarantineMark): string {
  const rules = mark.hits.map((hit) => `${hit.rule} (${JSON.stringify(hit.evidence)})`).join(', ');
  return `${mark.reason === undefined ? '' : `${mark.reason}; `}score ${mark.score}: ${rules}`;
}

/** Quarantined facts of the scope, oldest first. */
export async function listQuarantined(store: FactStore, scope: Scope): Promise<Fact[]> {
  return (await store.list(scope)).filter(isQuarantined);
}

/**
 * The user's confirmation: the fact becomes trusted. The mark moves to `provenance.confirmed` with the
 * time, so the decision stays reviewable and `requarantine` undoes it. Checked against the version read.
 */
export async function confirmQuarantined(
  store: FactStore,
  scope: Scope,
  id: string,
  at: string,
): Promise<Fact> {
  const fact = await quarantinedFact(store, scope, id);
  const { quarantine, ...rest } = fact.provenance;
  const provenance: Provenance = { ...rest, confirmed: { ...quarantine!, confirmedAt: at } };
  return store.update(scope, id, { provenance }, { expectedVersion: fact.version });
}

/** Undo a confirmation: the fact is quarantined again with the mark it had. */
export async function requarantine(store: FactStore, scope: Scope, id: string): Promise<Fact> {
  const fact = await store.get(scope, id);
  if (!fact) throw new NotFoundError(`No memory "${id}".`, { details: { id } });
  const { confirmed, ...rest } = fact.provenance;
  if (!confirmed) {
    throw new ValidationError(`Memory "${id}" was never confirmed out of quarantine.`, { details: { id } });
  }
  const { confirmedAt: _, ...mark } = confirmed;
  return store.update(
    scope,
    id,
    { provenance: { ...rest, quarantine: mark } },
    { expectedVersion: fact.version },
  );
}

/** Delete a quarantined fact; returns it, so the caller can show or restore what was dropped. */
export async function dropQuarantined(store: FactStore, scope: Scope, id: string): Promise<Fact> {
  const fact = await quarantinedFact(store, scope, id);
  await store.delete(scope, id, { expectedVersion: fact.version });
  return fact;
}

async function quarantinedFact(store: FactStore, scope: Scope, id: string): Promise<Fact> {
  const fact = await store.get(scope, id);
  if (!fact) throw new NotFoundError(`No memory "${id}".`, { details: { id } });
  if (!isQuarantined(fact)) {
    throw new ValidationError(`Memory "${id}" is not quarantined.`, { details: { id } });
  }
  return fact;
}
