import { addressesOnly, names, relationsAsked, subjectOf } from './entities.js';
import { asksForChoice, statesPreference } from './preferences.js';
import { questionShare } from './questions.js';
import { asksWhen, dayOf, overlaps, type TimeSpan, tellsTime, timeSpans } from './time.js';

/**
 * Recall's ranking signals, fused with the lexical (or hybrid) ranking a store returned. Each reads the
 * query and the candidates only, so it works the same over every store:
 *
 * - **context**: a conversation turn is found through the turn before it ("what are your pets' names?" →
 *   "Luna and Oliver!"): a candidate gains `context` × the score of the turn before it in the same
 *   session, and half that from the turn after it;
 * - **session**: turns of a session that holds many good candidates rank higher (× 1 + `session` × the
 *   session's share of the best session's scores);
 * - **entity**: a candidate whose subject is a person the query names, or a name the candidates link to a
 *   relation the query asks about ("my sister" → "my sister Anna" → Anna), × 1 + `entity`;
 * - **time**: when the query names a time ("on 8 May", "last week", "in 2022"), a candidate whose event
 *   time or whose own time expressions (resolved against its event time) fall in it, × 1 + `time`;
 * - **when**: when the query asks for a time or a duration ("when did…", "how long…"), a candidate that
 *   tells one ("yesterday", "last week", "on 8 May", "for 3 years"), × 1 + `when`: the answer is the
 *   record that dates the event;
 * - **preference**: when the query asks for a choice or a recommendation, a candidate that states a
 *   preference (or is a preference fact), × 1 + `preference`;
 * - **address**: when the query names a person, a candidate by someone else that names them only to talk
 *   to them ("Wow, Caroline! …", "Thanks, Jon.") × 1 − `address`: the name matched, but the turn is the
 *   listener's reply, not what the person said or did;
 * - **question**: a candidate that asks rather than tells, × 1 − `question` × the share of its text in
 *   questions ("What got you into running?"): the turn that answers holds what is asked about (the context
 *   signal lifts it through the question, which keeps its full score for that).
 *
 * Weights were chosen on LoCoMo's conversations 0–4 only (tools/bench, `bench:recall --ablation` shows
 * what each adds on both halves).
 */
export interface SignalWeights {
  context: number;
  session: number;
  entity: number;
  time: number;
  when: number;
  preference: number;
  address: number;
  question: number;
}

export const DEFAULT_SIGNAL_WEIGHTS: Readonly<SignalWeights> = Object.freeze({
  context: 0.3,
  session: 0.2,
  entity: 0.3,
  time: 1,
  when: 0.3,
  preference: 0.2,
  address: 0.5,
  question: 0.4,
});

/** A record the store found, as the signals see it. */
export interface SignalCandidate {
  /** The store's score (lexical or fused); higher is better. */
  score: number;
  /** The text the record is found by. */
  text: string;
  /** When what it tells happened (ms since the epoch), else when it was stored. */
  time?: number | undefined;
  /**
   * The times its text names, resolved against `time` (default: `timeSpans(text, time)`): a store that sees
   * the same records again can hand in a cached copy (it costs ~10 µs a text).
   */
  mentions?: (() => readonly TimeSpan[]) | undefined;
  /** Its subject (default: `subjectOf(text)`), cached the same way. */
  subject?: (() => string | undefined) | undefined;
  /** The share of its text in questions (default: `questionShare(text)`), cached the same way. */
  asks?: (() => number) | undefined;
  /** The conversation it came from and its turn there, for the context and session signals. */
  session?: string | undefined;
  turn?: number | undefined;
  /** A preference record by its category (see `PREFERENCE_CATEGORY`). */
  preference?: boolean | undefined;
}

/** What the signals read from a query, once. */
export interface QuerySignals {
  /** Spans of time it names, resolved against the time it is asked. */
  times: TimeSpan[];
  /** Names it mentions (lower case). */
  names: string[];
  /** Relations it asks about through an owner ("my sister" → sister). */
  relations: string[];
  /** It asks when something happened or how long it lasted. */
  when: boolean;
  /** It asks for a choice or a recommendation. */
  choice: boolean;
}

export function querySignals(query: string, now: number): QuerySignals {
  return {
    times: timeSpans(query, now),
    names: names(query),
    relations: relationsAsked(query),
    when: asksWhen(query),
    choice: asksForChoice(query),
  };
}

const subjectOfCandidate = (c: SignalCandidate) => (c.subject ? c.subject() : subjectOf(c.text));

const sessionTurn = (session: string, turn: number) => `${session}\u0000${turn}`;

/**
 * The candidates re-ranked by the signals, best first (ties keep the store's order); `linked` are names
 * linked to the query's relations (see `linkedNames`). Returns new scores; the candidates are not changed.
 */
export function rerankCandidates<T extends SignalCandidate>(
  candidates: readonly T[],
  query: QuerySignals,
  weights: Readonly<SignalWeights> = DEFAULT_SIGNAL_WEIGHTS,
  linked: readonly string[] = [],
): Array<{ candidate: T; score: number }> {
  const best = candidates.reduce((m, c) => Math.max(m, c.score), 0);
  if (!(best > 0)) return candidates.map((candidate) => ({ candidate, score: candidate.score }));
  const base = candidates.map((c) => c.score / best);
  const boost = candidates.map(() => 0);

  if (weights.context > 0) {
    const at = new Map<string, number>();
    candidates.forEach((c, i) => {
      if (c.session !== undefined && c.turn !== undefined) at.set(sessionTurn(c.session, c.turn), i);
    });
    candidates.forEach((c, i) => {
      if (c.session === undefined || c.turn === undefined) return;
      const next = at.get(sessionTurn(c.session, c.turn + 1));
      const previous = at.get(sessionTurn(c.session, c.turn - 1));
      if (next !== undefined) boost[next]! += weights.context * base[i]!;
      if (previous !== undefined) boost[previous]! += (weights.context / 2) * base[i]!;
    });
  }

  const sessionShare = new Map<string, number>();
  if (weights.session > 0) {
    candidates.forEach((c, i) => {
      if (c.session !== undefined) sessionShare.set(c.session, (sessionShare.get(c.session) ?? 0) + base[i]!);
    });
    const top = Math.max(0, ...sessionShare.values());
    for (const [session, sum] of sessionShare) sessionShare.set(session, top > 0 ? sum / top : 0);
  }

  const entities = new Set(query.names);
  const linkedNames = new Set(linked);
  const useEntity = weights.entity > 0 && (entities.size > 0 || linkedNames.size > 0);
  const useTime = weights.time > 0 && query.times.length > 0;
  const useWhen = weights.when > 0 && query.when;
  const usePreference = weights.preference > 0 && query.choice;
  const useAddress = weights.address > 0 && entities.size > 0;

  const scored = candidates.map((candidate, i) => {
    let factor = 1;
    if (candidate.session !== undefined && weights.session > 0) {
      factor *= 1 + weights.session * (sessionShare.get(candidate.session) ?? 0);
    }
    const subject = useEntity || useAddress ? subjectOfCandidate(candidate) : undefined;
    if (useEntity) {
      const about =
        (subject !== undefined && entities.has(subject)) ||
        (linkedNames.size > 0 && names(candidate.text).some((n) => linkedNames.has(n)));
      if (about) factor *= 1 + weights.entity;
    }
    if (
      useAddress &&
      subject !== undefined &&
      !entities.has(subject) &&
      addressesOnly(candidate.text, entities)
    ) {
      factor *= Math.max(0, 1 - weights.address);
    }
    if (useTime && candidate.time !== undefined) {
      const time = candidate.time;
      const inTime =
        overlaps(query.times, [dayOf(time)]) ||
        overlaps(query.times, candidate.mentions?.() ?? timeSpans(candidate.text, time));
      if (inTime) factor *= 1 + weights.time;
    }
    if (useWhen && candidate.time !== undefined) {
      const mentions = candidate.mentions?.() ?? timeSpans(candidate.text, candidate.time);
      if (tellsTime(candidate.text, mentions)) factor *= 1 + weights.when;
    }
    if (usePreference && (candidate.preference || statesPreference(candidate.text))) {
      factor *= 1 + weights.preference;
    }
    if (weights.question > 0) {
      const asks = candidate.asks ? candidate.asks() : questionShare(candidate.text);
      factor *= Math.max(0, 1 - weights.question * asks);
    }
    return { candidate, score: (base[i]! + boost[i]!) * factor, order: i };
  });
  return scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ candidate, score }) => ({ candidate, score }));
}
