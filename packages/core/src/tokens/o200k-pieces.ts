/**
 * o200k_base's pre-tokenizer: where each piece of a text ends. ASCII is scanned by hand, by the rules below
 * (the pattern's alternatives in order, as the regex engine would take them); whenever a rule needs a
 * character outside ASCII, that one piece is left to the pattern itself. The regex costs about as much as
 * the rest of counting together, and most text (JSON, code, base64, English) is ASCII.
 *
 *   1, 2. an optional non-letter, non-digit, non-line-break, then letters (upper then lower case) and an
 *         optional contraction ('s 'd 'm 't 'll 've 're, either case)
 *   3.    one to three digits
 *   4.    an optional space, punctuation, then line breaks and slashes
 *   5.    whitespace up to its last line break
 *   6, 7. whitespace not followed by a non-space (all but the last one before a word), or a lone space
 */
/** o200k_base's pre-tokenizer pattern (tiktoken's, as gpt-tokenizer 3.4 ships it; a test keeps them equal). */
export const O200K_PATTERN_SOURCE =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const PATTERN = new RegExp(O200K_PATTERN_SOURCE, 'uy');

const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
/** Whitespace other than a line break (the pattern's first class admits these, not \r or \n). */
const BLANK = 4;
const LINE_BREAK = 5;
const OTHER = 6;

const KIND = new Uint8Array(128).fill(OTHER);
for (let c = 65; c <= 90; c++) KIND[c] = UPPER;
for (let c = 97; c <= 122; c++) KIND[c] = LOWER;
for (let c = 48; c <= 57; c++) KIND[c] = DIGIT;
for (const c of [9, 11, 12, 32]) KIND[c] = BLANK;
for (const c of [10, 13]) KIND[c] = LINE_BREAK;

/** The kind of the character at `at`: 0 past the end, -1 outside ASCII. */
function kindAt(text: string, at: number): number {
  if (at >= text.length) return 0;
  const code = text.charCodeAt(at);
  return code < 128 ? KIND[code]! : -1;
}

/** How many pieces were left to the pattern (tests check that ASCII text never is). */
export const patternStats = { pieces: 0 };

/** Where the piece starting at `start` ends, by the pattern. */
function patternEnd(text: string, start: number): number {
  patternStats.pieces++;
  PATTERN.lastIndex = start;
  // Every character starts a piece, so the sticky pattern always matches.
  return PATTERN.exec(text) ? PATTERN.lastIndex : start + 1;
}

/** The end of the piece that starts at `start` (`start` < `text.length`). */
export function pieceEnd(text: string, start: number): number {
  const kind = kindAt(text, start);
  if (kind < 0) return patternEnd(text, start);
  if (kind === UPPER || kind === LOWER) return wordEnd(text, start, start);
  if (kind === DIGIT) {
    let end = start + 1;
    for (; end < start + 3; end++) {
      const after = kindAt(text, end);
      if (after < 0) return patternEnd(text, start);
      if (after !== DIGIT) break;
    }
    return end;
  }
  if (kind === BLANK || kind === OTHER) {
    const after = kindAt(text, start + 1);
    if (after < 0) return patternEnd(text, start);
    if (after === UPPER || after === LOWER) return wordEnd(text, start, start + 1);
    if (kind === OTHER) return punctuationEnd(text, start, start);
    if (text.charCodeAt(start) === 32 && after === OTHER) return punctuationEnd(text, start, start + 1);
  }
  return whitespaceEnd(text, start);
}

/** Rules 1 and 2: letters from `letters` (upper case, then lower case), then a contraction. */
function wordEnd(text: string, start: number, letters: number): number {
  let end = letters;
  let kind = kindAt(text, end);
  while (kind === UPPER) kind = kindAt(text, ++end);
  while (kind === LOWER) kind = kindAt(text, ++end);
  if (kind < 0) return patternEnd(text, start);
  if (text.charCodeAt(end) !== 39) return end;
  const first = text.charCodeAt(end + 1) | 32;
  if (first === 115 || first === 100 || first === 109 || first === 116) return end + 2;
  const second = text.charCodeAt(end + 2) | 32;
  if (
    (first === 108 && second === 108) ||
    (first === 118 && second === 101) ||
    (first === 114 && second === 101)
  ) {
    return end + 3;
  }
  return end;
}

/** Rule 4: punctuation from `from`, then any line breaks and slashes. */
function punctuationEnd(text: string, start: number, from: number): number {
  let end = from;
  let kind = kindAt(text, end);
  while (kind === OTHER) kind = kindAt(text, ++end);
  if (kind < 0) return patternEnd(text, start);
  for (;;) {
    const code = text.charCodeAt(end);
    if (code !== 10 && code !== 13 && code !== 47) return end;
    end++;
  }
}

/** Rules 5 to 7, on the run of whitespace at `start`. */
function whitespaceEnd(text: string, start: number): number {
  let end = start;
  let lastBreak = -1;
  for (;;) {
    const kind = kindAt(text, end);
    if (kind === LINE_BREAK) lastBreak = end;
    else if (kind !== BLANK) {
      if (kind < 0) return patternEnd(text, start);
      break;
    }
    end++;
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (end === text.length || end - start === 1) return end;
  return end - 1;
}
