import type { ChatMessage } from '../../model/messages.js';
import { englishAnalyzer } from '../../search/analyzer.js';
import type { IntentClassifier, IntentVerdict } from './recall.js';
import {
  ARTIFACT_SYNONYMS,
  ARTIFACTS,
  COMMON_CAPITALIZED,
  OPERATIONAL_VERBS,
  PERSON_PRONOUNS,
  PLACE_PREPOSITIONS,
  PRONOUNS,
  QUESTION_STARTS,
} from './words.js';

export const DETERMINISTIC_INTENT = 'deterministic';

/** The deterministic classifier as an `IntentClassifier` (no model call; see `classifyIntent`). */
export function deterministicIntent(): IntentClassifier {
  return {
    name: DETERMINISTIC_INTENT,
    async classify(input) {
      return { ...classifyIntent(input.userMessage, input.context), by: DETERMINISTIC_INTENT };
    },
  };
}

/** The message split into what it asks (where references are looked for) and the material it carries. */
interface Parts {
  instruction: string;
  /** Text the message carries for the task: after a colon, in quotes, in a code fence, on later lines. */
  payload: string;
}

/** A word of the instruction with where it stands. */
interface Word {
  text: string;
  lower: string;
  /** First word of its sentence. */
  initial: boolean;
  /** Index of its sentence. */
  sentence: number;
}

interface Context {
  /** Analyzed terms of the context (the replayed turns and the system prompt). */
  terms: ReadonlySet<string>;
  /** Lower-cased words of the context, for names. */
  words: ReadonlySet<string>;
  /** True when earlier turns are replayed: something for "it", "again" and a bare verb to refer to. */
  turns: boolean;
}

/**
 * Reads a user message against its context without a model, and calls it `ambiguous` (recall needed)
 * when it points at something neither the message nor the context holds:
 *
 * - memory phrases: "do you remember", "as usual", "last time", "you said", "we agreed", "yesterday";
 * - "again", "as before", "previous", and a pronoun or a bare operational verb ("fix it", "deploy") with
 *   no earlier turn to refer to;
 * - a user's thing named but not described: "the DB", "that file", "my repo" (a list of artifact words),
 *   when the context does not mention it and the message carries no material it could mean;
 * - questions about the user ("what did I…", "where do I…", "what's my…");
 * - in a question or an operational request, a single capitalized name the context does not mention
 *   ("When did Caroline…", "email Bob"), and "the upcoming / last / recent …" events;
 *
 * and `concrete` otherwise: a message that carries its material (text after a colon, in quotes or a code
 * block) or asks something general. The rules are lexical, so they err towards recall: a trivia question
 * about a person ("who wrote Hamlet?") triggers it, which costs a search, not an answer.
 */
export function classifyIntent(message: string, context: readonly ChatMessage[] = []): IntentVerdict {
  const parts = splitPayload(message);
  const ctx = readContext(context);
  const words = wordsOf(parts.instruction);
  const lower = parts.instruction.toLowerCase().replace(/’/g, "'");
  const hasPayload = parts.payload.trim().length > 0;
  const questions = questionSentences(parts.instruction, words);
  const cues: string[] = [];
  const add = (cue: string) => {
    if (!cues.includes(cue)) cues.push(cue);
  };

  for (const cue of memoryPhrases(lower)) add(cue);
  if (!ctx.turns && !hasPayload) for (const cue of backReferences(lower)) add(cue);
  for (const cue of unresolvedThings(lower, hasPayload, ctx)) add(cue);
  for (const cue of questionsAboutTheUser(lower)) add(cue);
  if (!ctx.turns && !hasPayload && !EXPLETIVE_IT.test(lower)) {
    for (const cue of pronounsWithoutAntecedent(words, ctx)) add(cue);
  }
  const operational = isOperational(words);
  for (const cue of unknownNames(words, questions, operational, ctx)) add(cue);
  for (const cue of particularEvents(lower, questions.size > 0)) add(cue);
  if (operational && !ctx.turns && !hasPayload && missesArguments(parts.instruction, words)) {
    add(`"${words[0]!.text}" names no object or parameters`);
  }

  if (cues.length > 0) {
    return {
      intent: 'ambiguous',
      reason: `Ambiguous: ${cues[0]}${cues.length > 1 ? ` (and ${cues.length - 1} more)` : ''}.`,
      cues,
    };
  }
  return {
    intent: 'concrete',
    reason: hasPayload
      ? 'Concrete: the message carries the material it is about.'
      : 'Concrete: nothing in the message refers to something outside it or its context.',
    cues: [],
  };
}

const FENCE = /```[\s\S]*?(```|$)/g;
const QUOTED = /"[^"\n]{3,}"|“[^”\n]{3,}”|‘[^’\n]{3,}’|(?<![A-Za-z])'[^'\n]{3,}'(?![A-Za-z])/g;

/** Code fences and quotes (two words or more) are payload; so is the rest after a colon or the first line. */
function splitPayload(message: string): Parts {
  const payload: string[] = [];
  let text = message.replace(FENCE, (m) => {
    payload.push(m);
    return ' ';
  });
  text = text.replace(QUOTED, (m) => {
    if (m.trim().split(/\s+/).length < 2) return m;
    payload.push(m);
    return ' ';
  });
  // "Summarize this: …", "Proofread my paragraph: …" — but not a time (7:30) or a URL (https://).
  const colon = /:(?=\s)/.exec(text);
  if (colon && text.slice(colon.index + 1).trim().length > 0) {
    payload.push(text.slice(colon.index + 1));
    text = text.slice(0, colon.index);
  }
  const [first = '', ...rest] = text.split('\n');
  if (rest.join(' ').trim().split(/\s+/).length >= 3) {
    payload.push(rest.join('\n'));
    text = first;
  }
  return { instruction: text, payload: payload.join('\n') };
}

function readContext(context: readonly ChatMessage[]): Context {
  const text = context.map((m) => m.content).join('\n');
  return {
    terms: new Set(englishAnalyzer.terms(text)),
    words: new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []),
    turns: context.some((m) => m.role !== 'system' && m.content.trim() !== ''),
  };
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’`-]*/gu;

const POSSESSIVE = /['’`]s?$/;

/** "It's", "That's", "Let's": contractions, not possessives. */
const CONTRACTED: ReadonlySet<string> = new Set(['it', 'that', 'there', 'here', 'let', 'he', 'she', 'this']);

/** "it" that stands for nothing: "what time is it", "is it raining". */
const EXPLETIVE_IT =
  /\b(what time is it|is it (going to )?(rain|snow|raining|snowing|cold|hot|sunny|windy|possible|true|safe|legal|normal|worth)|it (is|was|'s) (possible|true|better|worth|hard|easy|important|necessary|likely|raining|snowing))\b/;

function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  let sentence = 0;
  let initial = true;
  for (const piece of text.split(/(?<=[.!?])\s+|\n+/)) {
    for (const match of piece.match(WORD) ?? []) {
      out.push({ text: match, lower: match.toLowerCase().replace(/’/g, "'"), initial, sentence });
      initial = false;
    }
    sentence++;
    initial = true;
  }
  return out;
}

/** Indexes of the sentences that ask (end with "?" or start with a question word). */
function questionSentences(text: string, words: readonly Word[]): ReadonlySet<number> {
  const out = new Set<number>();
  const sentences = text.split(/(?<=[.!?])\s+|\n+/);
  sentences.forEach((s, i) => {
    if (s.trim().endsWith('?')) out.add(i);
  });
  for (const w of words) if (w.initial && QUESTION_STARTS.has(w.lower)) out.add(w.sentence);
  return out;
}

const MEMORY_PHRASES: ReadonlyArray<[RegExp, string]> = [
  [/\b(do|did|can|could) you (still )?(remember|recall)\b/, 'asks what was remembered'],
  [
    /\bremember (when|what|where|who|how|which|the|my|our|that (time|day|place|one))\b/,
    'asks what was remembered',
  ],
  [/\b(as|like) (usual|always|last time|we (did|said|discussed|agreed))\b/, 'refers to a habit'],
  [/\bthe usual\b/, 'refers to "the usual"'],
  [/\blast time\b/, 'refers to "last time"'],
  [/\bwe (discussed|talked about|agreed|decided|said|mentioned|planned)\b/, 'refers to an earlier talk'],
  [
    /\byou (said|told me|mentioned|suggested|recommended|promised|gave me|showed me|wrote)\b/,
    'refers to what the assistant said before',
  ],
  [/\bi (told|asked|showed) you\b/, 'refers to what the user said before'],
  [/\b(yesterday|last (week|month|year|night|session|weekend))\b/, 'refers to an earlier day'],
  [/\b(earlier|previously)\b/, 'refers to something earlier'],
];

function memoryPhrases(lower: string): string[] {
  return MEMORY_PHRASES.filter(([pattern]) => pattern.test(lower)).map(([, cue]) => cue);
}

const BACK_REFERENCES: ReadonlyArray<[RegExp, string]> = [
  [/\bagain\b/, '"again" with no earlier turn in the context'],
  [/\b(as|like) before\b/, '"as before" with no earlier turn in the context'],
  [/\bsame (as|way|one|thing|place)\b/, '"the same" with no earlier turn in the context'],
  [/\b(previous|last) (one|answer|result|step|command|version)\b/, 'refers to a previous result'],
];

function backReferences(lower: string): string[] {
  return BACK_REFERENCES.filter(([pattern]) => pattern.test(lower)).map(([, cue]) => cue);
}

const DETERMINED_THING = /\b(the|that|this|those|these|my|our|your)\s+(?:[\p{L}-]+\s+)?([\p{L}]+)\b/gu;
const CATAPHORIC = /^(following|below|above|attached|next|current|whole|entire)$/;

/** "the DB", "that file", "my repo": an artifact the message neither describes nor carries. */
function unresolvedThings(lower: string, hasPayload: boolean, ctx: Context): string[] {
  const out: string[] = [];
  for (const match of lower.matchAll(DETERMINED_THING)) {
    const [phrase, determiner, noun] = match as unknown as [string, string, string];
    const modifier = phrase.slice(determiner.length).trim().split(/\s+/)[0]!;
    if (CATAPHORIC.test(modifier)) continue;
    // The noun is either right after the determiner or after one modifier ("the prod DB").
    const head = ARTIFACTS.has(modifier) ? modifier : noun;
    if (!ARTIFACTS.has(head)) continue;
    // "this text: …", "my paragraph: …" name the material the message carries.
    if (hasPayload && determiner !== 'that' && determiner !== 'those') continue;
    if (mentioned(head, ctx)) continue;
    const headFirst = head === modifier && head !== noun;
    const shown = headFirst ? `${determiner} ${head}` : phrase;
    // "the report of March", "the file called notes.txt": a phrase after it says which one.
    const after = headFirst
      ? phrase.slice(phrase.indexOf(head, determiner.length) + head.length) +
        lower.slice((match.index ?? 0) + phrase.length)
      : lower.slice((match.index ?? 0) + phrase.length);
    if (determiner === 'the' && /^\s+(of|about|called|named|that|which|where)\b/.test(after)) continue;
    out.push(`"${shown}" is not in the context`);
  }
  return out;
}

function mentioned(word: string, ctx: Context): boolean {
  return [word, ...(ARTIFACT_SYNONYMS.get(word) ?? [])].some((candidate) => {
    if (ctx.words.has(candidate)) return true;
    const terms = englishAnalyzer.terms(candidate);
    return terms.length > 0 && terms.every((term) => ctx.terms.has(term));
  });
}

const ABOUT_THE_USER: ReadonlyArray<RegExp> = [
  /\b(what|when|where|who|which|why)\s+(do|did|am|was|were|have|had)\s+(i|we)\b/,
  /\b(did|have|had)\s+(i|we)\b/,
  /\bdo\s+(i|we)\s+(have|own|like|prefer|need|use|know|usually|still)\b/,
  /\b(what|where|when|who|which)('s|\s+is|\s+are|\s+was|\s+were)\s+(my|our)\b/,
  /\b(am|was)\s+i\b/,
];

function questionsAboutTheUser(lower: string): string[] {
  return ABOUT_THE_USER.some((pattern) => pattern.test(lower)) ? ['asks about the user'] : [];
}

/** "it", "they", "her" with nothing before them in the message to stand for, and no earlier turn. */
function pronounsWithoutAntecedent(words: readonly Word[], ctx: Context): string[] {
  const out: string[] = [];
  for (const [i, word] of words.entries()) {
    let pronoun = PRONOUNS.has(word.lower);
    // "do that", "fix this", "send those": a demonstrative standing alone at the end or before a preposition.
    if (!pronoun && /^(that|this|those|these)$/.test(word.lower)) {
      const next = words[i + 1];
      pronoun =
        !next ||
        next.sentence !== word.sentence ||
        /^(to|for|with|in|on|again|please|now|and|later)$/.test(next.lower);
    }
    if (!pronoun) continue;
    const before = words.slice(0, i);
    const antecedent = PERSON_PRONOUNS.has(word.lower)
      ? before.some(
          (w) =>
            isName(w, words) ||
            /^(man|woman|boy|girl|person|friend|mother|father|sister|brother|wife|husband|son|daughter)$/.test(
              w.lower,
            ),
        )
      : englishAnalyzer.terms(before.map((w) => w.text).join(' ')).length >= 2;
    if (!antecedent && !(PERSON_PRONOUNS.has(word.lower) && ctx.turns)) {
      out.push(`"${word.text}" has no antecedent`);
    }
  }
  return out;
}

/** A capitalized word standing alone (not part of a multi-word title, not an acronym or a common word). */
function isName(word: Word, words: readonly Word[]): boolean {
  const bare = word.text.replace(POSSESSIVE, '');
  const key = bare.toLowerCase();
  if (COMMON_CAPITALIZED.has(key) || QUESTION_STARTS.has(key) || CONTRACTED.has(key)) return false;
  // A possessive is someone's ("Caroline's son", "McGee's bar", "James' mother"), wherever it stands.
  if (bare !== word.text) return /^\p{Lu}\p{L}*\p{Ll}\p{L}*$/u.test(bare);
  if (!/^\p{Lu}\p{Ll}+$/u.test(bare)) return false;
  const i = words.indexOf(word);
  const prev = words[i - 1];
  const next = words[i + 1];
  const capital = (w: Word | undefined) =>
    w !== undefined && w.sentence === word.sentence && /^\p{Lu}/u.test(w.text) && !w.initial;
  if (capital(prev) || (capital(next) && !POSSESSIVE.test(next!.text))) return false;
  return !word.initial && !(prev && PLACE_PREPOSITIONS.has(prev.lower));
}

/** Names the context does not mention, in questions and in operational requests ("email Bob"). */
function unknownNames(
  words: readonly Word[],
  questions: ReadonlySet<number>,
  operational: boolean,
  ctx: Context,
): string[] {
  const out: string[] = [];
  for (const word of words) {
    if (!questions.has(word.sentence) && !operational) continue;
    if (!isName(word, words)) continue;
    const name = word.text.replace(POSSESSIVE, '');
    if (ctx.words.has(name.toLowerCase())) continue;
    out.push(`"${name}" is not in the context`);
  }
  return out;
}

const EVENT =
  /\bthe\s+(?:[\p{L}+-]+\s+){0,3}?(?:race|workshop|reading|party|trip|concert|event|festival|conference|wedding|game|show|class|course|talk|match|tournament|ceremony|parade|gala|fundraiser|camp|hike|vacation|holiday|visit|dinner|lunch|interview|exhibition|competition|performance|convention|meetup|retreat|reunion|opening)s?\b(?!\s+(of|in)\b)/u;

/** "the upcoming party", "the charity race": one particular event, in a question. */
function particularEvents(lower: string, asks: boolean): string[] {
  if (!asks) return [];
  const match =
    /\bthe\s+(upcoming|recent|latest|last|next|previous|same)\s+([\p{L}-]+)\b(?!\s+(of|in)\b)/u.exec(lower) ??
    EVENT.exec(lower);
  return match ? [`"${match[0]}" is a particular event not in the context`] : [];
}

function isOperational(words: readonly Word[]): boolean {
  const first = words[0];
  return first !== undefined && OPERATIONAL_VERBS.has(first.lower);
}

/** An operational request of a few words with nothing specific in it: "deploy", "book a table". */
function missesArguments(instruction: string, words: readonly Word[]): boolean {
  if (/\d|@|\/|\.\w{2,4}\b/.test(instruction)) return false;
  if (words.slice(1).some((w) => /^\p{Lu}/u.test(w.text))) return false;
  return englishAnalyzer.terms(instruction).length <= 3;
}
