import { englishAnalyzer } from '../../search/analyzer.js';
import type { Exchange } from './exchange.js';

/*
 * Extraction stores what the user said. A candidate the extractor proposes is checked against the
 * exchange's two texts: the user's message, and the assistant's answer, which may quote what the user never
 * said (a stored document, a recalled memory, a tool result). The check is lexical and deterministic, on the
 * analyzer's terms (stemmed, stop words out), and measured by `pnpm bench:grounding` on a labelled set.
 */

/** Words every fact about a user uses: they say nothing about where its content came from. */
const GENERIC: ReadonlySet<string> = new Set(
  englishAnalyzer.terms(
    'user users prefers preferred preference likes wants named calls called says said mentioned told uses used ' +
      'currently now also',
  ),
);

/** The share of a candidate's terms the user's message must hold. */
export const GROUNDING_MIN_USER_SHARE = 0.5;

export interface Grounding {
  grounded: boolean;
  /** Share of the candidate's terms that are in the user's message (1 when it has none to check). */
  userShare: number;
  /** The candidate's terms found in the assistant's answer and not in the user's message. */
  assistantOnly: string[];
  /** Why it is not grounded (absent when it is). */
  reason?: string;
}

/**
 * Whether `content` is supported by what the user said in `exchange`: at least half its terms
 * (`GROUNDING_MIN_USER_SHARE`, generic words such as "user" or "prefers" left out) are in the user's
 * message, and none of the terms it takes only from the assistant's answer holds a digit (a code, a
 * number, a time, a date: "heron-7731", "3pm" — the details a quote carries and a paraphrase of the user
 * never invents). A term in neither text (the extractor's own wording) counts against the share only.
 */
export function groundedInUser(content: string, exchange: Exchange): Grounding {
  const terms = [...new Set(englishAnalyzer.terms(content))].filter((t) => !GENERIC.has(t));
  if (terms.length === 0) return { grounded: true, userShare: 1, assistantOnly: [] };
  const user = new Set(englishAnalyzer.terms(exchange.user));
  const answer = new Set(englishAnalyzer.terms(exchange.answer ?? ''));
  const fromUser = terms.filter((t) => user.has(t));
  const assistantOnly = terms.filter((t) => !user.has(t) && answer.has(t));
  const userShare = fromUser.length / terms.length;
  const quoted = assistantOnly.filter((t) => /\d/.test(t));
  if (quoted.length > 0) {
    return {
      grounded: false,
      userShare,
      assistantOnly,
      reason: `${quoted.join(', ')} only in the assistant's answer`,
    };
  }
  if (userShare < GROUNDING_MIN_USER_SHARE) {
    return {
      grounded: false,
      userShare,
      assistantOnly,
      reason: `${Math.round(userShare * 100)}% of its words in the user's message`,
    };
  }
  return { grounded: true, userShare, assistantOnly };
}
