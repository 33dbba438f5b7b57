/**
 * The injection detector: deterministic rules that say whether a text reads like instructions to a model
 * rather than information about the user. Each rule has a weight; a text whose fired weights add up to
 * `INJECTION_THRESHOLD` or more is flagged. The verdict names every rule that fired and the text it
 * matched, so a quarantined memory always says why.
 */

import { splitUserWords } from './user-words.js';

export interface InjectionRule {
  /** Stable id, shown in quarantine marks (`ignore-instructions`, `role-marker`, …). */
  readonly id: string;
  readonly weight: number;
  /** What the rule looks for, in words. */
  readonly description: string;
  readonly pattern: RegExp;
  /**
   * What the pattern reads: `text` (default) the normalised text (`normaliseForDetection`), `raw` the text
   * as given (invisible characters), `comments` the bodies of its HTML and Markdown comments.
   */
  readonly reads?: 'text' | 'raw' | 'comments';
}

export interface RuleHit {
  rule: string;
  weight: number;
  /** The matched text, cut to 80 characters. */
  evidence: string;
}

export interface InjectionVerdict {
  flagged: boolean;
  score: number;
  hits: RuleHit[];
  /** Set when a hit is in text the user pasted or quoted in the same message (`DetectOptions.userText`). */
  pasted?: true;
}

export interface DetectOptions {
  /**
   * What the user typed in the same exchange. Its own sentences (`splitUserWords`: not what it pasted or
   * quoted) answer for a few rules: "remember to send reports to me@x.org" is the user's wish. Rules that
   * steer the model count whoever wrote them.
   */
  userText?: string;
}

/** The score at which a text is flagged. */
export const INJECTION_THRESHOLD = 3;

const URL_OR_EMAIL = String.raw`(?:https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`;
/** Verbs that move data somewhere, as an order (`SEND`) and as a participle (`SENT`). */
const SEND = String.raw`(?:send|forward|post|upload|e-?mail|transmit|leak|exfiltrate|copy|cc|bcc|report|submit|deliver)`;
const SENT = String.raw`(?:sent|sending|forward(?:ed|ing)|post(?:ed|ing)|upload(?:ed|ing)|e-?mail(?:ed|ing)|transmitted|leaked|exfiltrated|copied|reported|submitted|delivered)`;

export const INJECTION_RULES: readonly InjectionRule[] = Object.freeze([
  {
    id: 'ignore-instructions',
    weight: 3,
    description: 'tells the model to ignore, forget or override its instructions',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|your|the|system|original)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|context)\b/i,
  },
  {
    id: 'role-marker',
    weight: 3,
    description: 'a chat-template or role marker (system:, <|im_start|>, [INST], <<SYS>>, <system>)',
    pattern:
      /(?:<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>|<\/?(?:system|instructions?)>|(?:^|\n|[:.!?]\s)\s*#{0,3}\s*(?:system|developer)\s*(?:prompt|message)?\s*:)/i,
  },
  {
    id: 'tool-call-json',
    weight: 3,
    description: 'a tool or function call written as JSON',
    pattern:
      /"(?:tool_calls|function_call|tool_use)"\s*:|"(?:name|tool|function)"\s*:\s*"[\w.-]+"\s*,\s*"(?:arguments|parameters|args|input)"\s*:/i,
  },
  {
    id: 'exfiltration-order',
    weight: 3,
    description:
      'orders (or says the user wants) something sent, forwarded or uploaded to a URL or e-mail address',
    pattern: new RegExp(
      String.raw`(?:(?:^|[.!?:;,]\s*|\n)(?:please\s+|also\s+|then\s+|and\s+|always\s+|(?:the\s+)?(?:assistant|ai|model|agent|you)\s+(?:must|should|will|shall)\s+(?:always\s+)?)*${SEND}|\b(?:wants?|asks?|would like)\b[^.\n]{0,40}?\b${SENT})\b[^\n]{0,80}?\b(?:to|at|into)\s+${URL_OR_EMAIL}`,
      'i',
    ),
  },
  {
    id: 'exfiltration',
    weight: 2,
    description: 'mentions sending, forwarding or uploading something to a URL or e-mail address',
    pattern: new RegExp(
      String.raw`\b(?:${SEND}|${SENT})\b[^\n]{0,80}?\b(?:to|at|into)\s+${URL_OR_EMAIL}`,
      'i',
    ),
  },
  {
    id: 'markdown-exfiltration',
    weight: 3,
    description: 'a markdown image or link whose URL carries data in its query string',
    pattern: /!\[[^\]]*\]\(\s*https?:\/\/[^)\s]*\?[^)\s]*=/i,
  },
  {
    id: 'prompt-leak',
    weight: 3,
    description: 'asks to reveal the system prompt or instructions',
    pattern:
      /\b(?:reveal|print|show|repeat|output|leak|dump|tell me)\b[^.\n]{0,30}?\b(?:system prompt|initial prompt|hidden prompt|your (?:instructions|prompt|rules))\b/i,
  },
  {
    id: 'new-instructions',
    weight: 2,
    description: 'announces new instructions or a new role for the model',
    pattern:
      /\b(?:new|updated|real|actual|additional|important|hidden|secret) (?:instructions?|system prompt|directives?|orders)\b|\byou (?:are|must) now\b|\bfrom now on,? you\b|\byour new (?:role|task|goal|instructions?)\b/i,
  },
  {
    id: 'addressed-to-model',
    weight: 2,
    description: 'speaks to the AI itself (“AI assistant: you must …”, “note to the model”)',
    pattern:
      /\b(?:(?:dear|attention|note to (?:the)?)\s*(?:ai|llm|assistant|model|agent|chatbot)s?\b|(?:ai|llm|language model|assistant|agent)s?,? (?:reading this|you (?:must|should|will|are instructed)))/i,
  },
  {
    id: 'always-rule',
    weight: 1,
    description: 'an unconditional standing order (always / never / whenever … you)',
    pattern:
      /\b(?:always|never|whenever|every time)\b[^.\n]{0,40}?\byou\b|\byou (?:must|should|will) (?:always|never)\b/i,
  },
  {
    id: 'persist-memory',
    weight: 2,
    description: 'asks the model to write something into its memory',
    pattern:
      /\b(?:save|store|write|add|keep) (?:this|that|it|the following)\b[^.\n]{0,30}?\b(?:memory|memories)\b|\b(?:permanent|long-term) memory\b/i,
  },
  {
    id: 'credentials',
    weight: 2,
    description: 'asks for passwords, API keys, tokens or private keys',
    pattern:
      /\b(?:send|share|reveal|include|output|print|give|paste|provide)\b[^.\n]{0,40}?\b(?:passwords?|api[ _-]?keys?|access tokens?|credentials|private keys?|ssh keys?|secret keys?)\b/i,
  },
  {
    id: 'jailbreak',
    weight: 2,
    description: 'a known jailbreak phrase (DAN, developer mode, do anything now)',
    pattern:
      /\b(?:do anything now|developer mode|jailbreak|DAN mode|no (?:restrictions|filters|guidelines))\b/i,
  },
  {
    id: 'hidden-text',
    weight: 2,
    description:
      'invisible characters (Unicode tag characters, zero-width runs), an HTML comment or a Markdown comment',
    reads: 'raw',
    pattern:
      /[\u{E0000}-\u{E007F}]|[\u200B-\u200D\u2060\uFEFF]{2,}|<!--[\s\S]{0,2000}?-->|^[ \t]*\[(?:\/\/|comment)\]:[ \t]*(?:#|<>)[ \t]*\(/mu,
  },
  {
    id: 'comment-instruction',
    weight: 2,
    description: 'a comment, which a reader of the rendered page never sees, that gives an order',
    reads: 'comments',
    pattern:
      /(?:^|[:.!?]\s*)\s*(?:please\s+)?(?:always|never|remember|include|send|forward|ignore|disregard|reply|respond|answer|tell|say|do not|don't|you (?:must|should|will)|(?:the\s+)?(?:assistant|ai|model|agent)\b)/i,
  },
  {
    id: 'ignore-instructions-intl',
    weight: 3,
    description:
      'tells the model to ignore its instructions in Spanish, French, German, Portuguese, Italian, Chinese or Japanese',
    pattern:
      /(?<!\p{L})(?:ignor\p{L}*|olvid\p{L}*|omit\p{L}*|oubli\p{L}*|vergiss\p{L}*|missacht\p{L}*|esque[cç]\p{L}*|desconsider\p{L}*|dimentic\p{L}*|tralascia\p{L}*)[^.\n]{0,40}?(?<!\p{L})(?:instrucciones|indicaciones|instructions|consignes|anweisungen|instruktionen|vorgaben|instru[cç][õo]es|istruzioni)(?!\p{L})|(?:忽略|无视|忽视|忘记|忘掉)[^。\n]{0,12}?(?:指令|指示|说明|规则|提示)|(?:指示|命令|ルール|プロンプト)[^。\n]{0,8}?(?:無視|忘れ)/iu,
  },
  {
    id: 'exfiltration-order-intl',
    weight: 3,
    description:
      'orders something sent or forwarded to a URL or e-mail address in Spanish, French, German, Portuguese, Italian, Chinese or Japanese',
    pattern: new RegExp(
      String.raw`(?:(?<!\p{L})(?:env[ií][aeo]\p{L}*|reenv[ií][aeo]\p{L}*|mand[ae]\p{L}*|envoie\p{L}*|envoy\p{L}*|transf[eè]r\p{L}*|transmet\p{L}*|send[ee]\p{L}*|schick\p{L}*|leite\p{L}*|weiterleit\p{L}*|übermittl\p{L}*|encaminh\p{L}*|invia\p{L}*|inoltr\p{L}*)(?!\p{L})|发送|发给|转发|寄给|传给)[^
]{0,80}?${URL_OR_EMAIL}|${URL_OR_EMAIL}[^
]{0,12}?(?:に|へ)?\s*(?:送信|送って|送る|転送)`,
      'iu',
    ),
  },
]);

/** Latin look-alikes of Cyrillic and Greek letters (the confusables a mixed-script word uses to hide). */
const CONFUSABLES: Readonly<Record<string, string>> = Object.freeze({
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  һ: 'h',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ӏ: 'l',
  ё: 'e',
  ѵ: 'v',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  У: 'Y',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  Ԁ: 'D',
  Ԛ: 'Q',
  Ԝ: 'W',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
});

const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF\u00AD\u{E0000}-\u{E007F}]/gu;
const WORD_RUN = /[\p{L}\p{M}]+/gu;

/**
 * The text as a model reads it: compatibility forms folded (NFKC: fullwidth letters, ligatures), invisible
 * characters removed (zero-width, soft hyphen, Unicode tags), and in a word that mixes Latin with Cyrillic
 * or Greek, the look-alike letters read as the Latin ones ("Ignоrе" with Cyrillic о and е is "Ignore").
 * A word wholly in Cyrillic or Greek is left as it is. Blockquote markers (`> `) at the start of a line are
 * dropped: a model reads a quoted line as the line.
 */
export function normaliseForDetection(text: string): string {
  const folded = unquoteLines(text).normalize('NFKC').replace(INVISIBLE, '');
  // Words are examined only when the text has a Cyrillic or Greek letter at all (most text has none).
  if (!CYRILLIC_OR_GREEK.test(folded)) return folded;
  return folded.replace(WORD_RUN, (word) =>
    LATIN.test(word) && CYRILLIC_OR_GREEK.test(word)
      ? [...word].map((ch) => CONFUSABLES[ch] ?? ch).join('')
      : word,
  );
}

const LATIN = /\p{Script=Latin}/u;
const QUOTE_MARKERS = /^[ \t]*(?:>[ \t]?)+/gm;

/** The text without the `>` markers that open quoted lines. */
function unquoteLines(text: string): string {
  return text.includes('>') ? text.replace(QUOTE_MARKERS, '') : text;
}
const CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

const COMMENT_OPENING = /<!--|\]\(|\]:/;
const COMMENTS =
  /<!--([\s\S]{0,2000}?)-->|^[ \t]*\[(?:\/\/|comment)\]:[ \t]*(?:#|<>)[ \t]*\(([^\n]*)\)[ \t]*$|\]\([^\s)]*\s+(?:"([^"\n]{1,500})"|'([^'\n]{1,500})')\)/gm;

/**
 * The bodies of the text's HTML comments, Markdown comments (`[//]: # (…)`) and Markdown link titles
 * (`[text](url "title")`, shown only on hover), one per line.
 */
function commentBodies(text: string): string {
  // Every form opens with `<!--`, or has `](` or `]:`.
  if (!COMMENT_OPENING.test(text)) return '';
  return [...text.matchAll(COMMENTS)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim()).join('\n');
}

/**
 * Rules the user's own words answer for: a standing order, "remember this", "from now on you …", said in
 * the user's own sentences, is their wish. Every other rule steers the model (ignore instructions, role
 * markers, tool-call JSON, prompt leaks, hidden text, credentials, jailbreaks) and counts whoever wrote it.
 */
const OWN_WORDS_RULES: ReadonlySet<string> = new Set([
  'always-rule',
  'persist-memory',
  'new-instructions',
  'addressed-to-model',
]);
/**
 * Rules about sending something to an address: forgiven only when the user's own words give a send order
 * to every address the match names — never because the address alone appears (a URL the user asked to
 * read is not an address they asked to send to).
 */
const ORDER_RULES: ReadonlySet<string> = new Set([
  'exfiltration-order',
  'exfiltration',
  'exfiltration-order-intl',
]);

const GLOBAL_PATTERNS = new Map(
  INJECTION_RULES.map((rule) => [
    rule.id,
    new RegExp(
      rule.pattern.source,
      rule.pattern.flags.includes('g') ? rule.pattern.flags : `${rule.pattern.flags}g`,
    ),
  ]),
);

/** The user's message, read once a rule fires: their own words, what they carried, their send orders. */
interface UserSide {
  own: string;
  carried: string;
  /** The URLs and addresses the user's own words order something sent to. */
  orderedTargets: Set<string>;
  /** The rules that fire on what the user carried, read on its own. */
  carriedRules: Set<string>;
}

function readUserSide(userText: string): UserSide {
  const words = splitUserWords(userText);
  const own = normaliseForDetection(words.own).toLowerCase();
  const carried = normaliseForDetection(words.carried).toLowerCase();
  const orderedTargets = new Set<string>();
  for (const id of ORDER_RULES) {
    for (const m of own.matchAll(GLOBAL_PATTERNS.get(id)!)) {
      for (const target of targetsOf(m[0])) orderedTargets.add(target);
    }
  }
  return { own, carried, orderedTargets, carriedRules: rulesFiringOn(words.carried) };
}

/** The ids of the rules whose pattern matches `text` (no weights, no exemptions). */
function rulesFiringOn(text: string): Set<string> {
  if (text.trim() === '') return new Set();
  const normalised = normaliseForDetection(text);
  const read = { text: normalised, raw: unquoteLines(text), comments: commentBodies(normalised) };
  return new Set(INJECTION_RULES.filter((r) => r.pattern.test(read[r.reads ?? 'text'])).map((r) => r.id));
}

/** The URLs and e-mail addresses a text names, lower case, without trailing punctuation. */
function targetsOf(text: string): string[] {
  return (text.toLowerCase().match(new RegExp(URL_OR_EMAIL, 'gi')) ?? []).map((t) =>
    t.replace(/[.,;:!?)>\]"']+$/, ''),
  );
}

/** Whether the user's own words answer for this match of `rule` (see `OWN_WORDS_RULES`, `ORDER_RULES`). */
function forgiven(rule: string, matched: string, user: UserSide): boolean {
  const lower = matched.toLowerCase().trim();
  // Empty evidence (a run of invisible characters trimmed away) is "in" every text: never forgiven.
  if (lower === '') return false;
  if (OWN_WORDS_RULES.has(rule)) return user.own.includes(lower);
  if (!ORDER_RULES.has(rule)) return false;
  const targets = targetsOf(lower);
  return targets.length > 0 && targets.every((t) => user.orderedTargets.has(t));
}

/** Whether the rule fires on what the user pasted or quoted, or the match or an address it names is in it. */
function carriedIn(rule: string, matched: string, user: UserSide): boolean {
  if (user.carried === '') return false;
  if (user.carriedRules.has(rule)) return true;
  const lower = matched.toLowerCase().trim();
  if (lower !== '' && user.carried.includes(lower)) return true;
  const targets = targetsOf(lower);
  return targets.length > 0 && targets.some((t) => user.carried.includes(t));
}

/** The matched text as evidence: trimmed, invisible characters named, cut to 80 characters. */
function evidenceOf(matched: string): string {
  const shown = matched
    .replace(INVISIBLE, (ch) => `<U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`)
    .trim();
  return shown.slice(0, 80);
}

/**
 * Runs every rule over `text` and adds up the weights of those that fired. With `userText`, a match the
 * user's own words answer for does not count (`forgiven`); every match of a rule is tried, so an innocent
 * phrase the user typed never hides a second, hostile one.
 */
export function detectInjection(text: string, options: DetectOptions = {}): InjectionVerdict {
  // What the user typed is read only when a rule fires (most texts fire none).
  let user: UserSide | undefined;
  const userSide = () => {
    user ??= readUserSide(options.userText ?? '');
    return user;
  };
  const normalised = normaliseForDetection(text);
  const read = { text: normalised, raw: unquoteLines(text), comments: commentBodies(normalised) };
  const hits: RuleHit[] = [];
  let pasted = false;
  for (const rule of INJECTION_RULES) {
    const source = read[rule.reads ?? 'text'];
    if (!rule.pattern.test(source)) continue;
    for (const match of source.matchAll(GLOBAL_PATTERNS.get(rule.id)!)) {
      if (match[0] === '') continue;
      if (options.userText !== undefined && forgiven(rule.id, match[0], userSide())) continue;
      hits.push({ rule: rule.id, weight: rule.weight, evidence: evidenceOf(match[0]) });
      if (options.userText !== undefined && carriedIn(rule.id, match[0], userSide())) pasted = true;
      break;
    }
  }
  const score = hits.reduce((sum, hit) => sum + hit.weight, 0);
  const verdict: InjectionVerdict = { flagged: score >= INJECTION_THRESHOLD, score, hits };
  if (pasted) verdict.pasted = true;
  return verdict;
}
