/*
 * What a user's message holds: the sentences they wrote themselves, and what they carried in — a quoted
 * passage, `>` lines, a code fence, a pasted e-mail (headers, the text after them, a signature), the text
 * after "X said:" or "here is what the page says:", a long paragraph they did not compose. The detector
 * forgives a few rules for the user's own words only (`detector.ts`); carried text is judged like a
 * tool's output, and a memory taken from it is held for the user's confirmation.
 *
 * Carried text is given as a model reads it: without the `>` markers, fence lines or quote marks.
 *
 * The split is deterministic and errs towards "carried": text wrongly called carried only loses an
 * exemption (the memory waits for a confirmation); text wrongly called the user's own lets a paste steer.
 */

export interface UserWords {
  /** The user's own sentences, one run per line. */
  own: string;
  /** What the user pasted or quoted, one run per line. */
  carried: string;
}

/** A code fence's opening or closing line. */
const FENCE = /^\s*(?:```|~~~)/;
/** A quoted line (Markdown blockquote, e-mail reply). */
const QUOTED_LINE = /^\s*>/;
/** A header line of a pasted e-mail or message. */
const MAIL_HEADER =
  /^\s*(?:from|to|cc|bcc|subject|date|sent|reply-to|de|para|asunto|objet|von|an|betreff|oggetto|da|a)\s*:\s*\S/i;
/** A line that opens forwarded or replied-to text: everything after it is carried. */
const FORWARD_OPENING =
  /^\s*(?:-{2,}\s*(?:original message|forwarded message|mensaje original|message d'origine|ursprüngliche nachricht)\s*-{2,}|begin forwarded message:|on .{3,80}\bwrote:\s*$)/i;
/** An e-mail signature separator: what follows is the sender's signature. */
const SIGNATURE = /^--\s*$/;
/**
 * A framing that hands over someone else's words: "Here is what the release page said:", "my boss wrote:",
 * "the e-mail reads:", "paste:". What follows the colon is carried.
 */
const FRAMING =
  /(?:\b(?:said|says|wrote|writes|reads|read|posted|replied|answered|states|stated|tweeted|commented|sent me|told me|dijo|escribió|a dit|a écrit|sagte|schrieb|disse|escreveu|ha detto|ha scritto)|\b(?:here(?:'s| is| are)|this is|below is|see)\b(?!\s+(?:my|our)\s+(?:own\s+)?(?:rule|preference|wish|request|instruction|plan|idea|order)s?\b)[^:\n]{0,80}|\b(?:the following|as follows|pasted?|pasting|quote|quoting|excerpt|e-?mail|article|output|log|snippet|transcript|document|readme|release notes?|announcement))\s*:(?=\s|$)/i;
/** A question about what came before ("is this legit?", "what do you think?"): the text before it is carried. */
const ABOUT_THE_ABOVE =
  /^(?:is (?:this|that|it)\b|are (?:these|those|they)\b|what (?:do you think|does (?:this|that|it) mean|is this)|should i\b|can you (?:check|explain|summari[sz]e|tell)|thoughts\??$|legit\??$|(?:any )?(?:ideas|opinions?)\??$)/i;
/**
 * Straight or curly double quotes (and guillemets, 「」) around a passage of at least 12 characters: a
 * phrase, a sentence, a paragraph (a quote may span lines).
 */
const QUOTED_PASSAGE = /"([^"\n]{12,})"|“([^”]{12,})”|«([^»]{12,})»|„([^“”]{12,})[“”]|「([^」]{12,})」/g;
/** A paragraph this long in a message with other paragraphs was pasted, not typed. */
const LONG_RUN_CHARS = 600;

/** Splits `message` into the user's own words and the text they carried in (see the file's comment). */
export function splitUserWords(message: string): UserWords {
  const own: string[] = [];
  const carried: string[] = [];
  // Quoted passages first (they may span lines); the words around them stay where they are.
  const unquoted = message.replace(QUOTED_PASSAGE, (whole: string, ...rest: unknown[]) => {
    const at = rest[5] as number;
    // A JSON string ("name": "x") is not a quotation: it stays with its line.
    if (
      (whole.startsWith('"') && /[:{[]\s*$/.test(message.slice(Math.max(0, at - 3), at))) ||
      (whole.startsWith('"') && /^\s*:/.test(message.slice(at + whole.length)))
    )
      return whole;
    carried.push((rest.slice(0, 5) as Array<string | undefined>).find((g) => g !== undefined) ?? '');
    return ' ';
  });
  const lines = unquoted.split(/\r?\n/);
  let inFence = false;
  let rest = false; // everything from here on is carried (a forwarded e-mail, its signature)
  let afterFraming = false; // carried until a blank line followed by the user's own question
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (rest) {
      carried.push(line);
      continue;
    }
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      carried.push(line);
      continue;
    }
    if (QUOTED_LINE.test(line)) {
      carried.push(line.replace(/^\s*(?:>\s?)+/, ''));
      continue;
    }
    if (FORWARD_OPENING.test(line) || SIGNATURE.test(line) || mailHeaderBlock(lines, i)) {
      rest = true;
      carried.push(line);
      continue;
    }
    if (afterFraming) {
      if (line.trim() === '' || !(ABOUT_THE_ABOVE.test(line.trim()) && blankBefore(lines, i))) {
        carried.push(line);
        continue;
      }
      afterFraming = false;
    }
    const framing = FRAMING.exec(line);
    if (framing) {
      const cut = framing.index + framing[0].length;
      own.push(line.slice(0, cut));
      carried.push(line.slice(cut));
      afterFraming = true;
      continue;
    }
    own.push(line);
  }
  moveLongRuns(own, carried);
  moveAboveQuestion(message, own, carried);
  return { own: own.join('\n').trim(), carried: carried.join('\n').trim() };
}

/** Two header lines in a row (From:, To:, Subject: …), or one `From:` line: a pasted e-mail starts here. */
function mailHeaderBlock(lines: readonly string[], i: number): boolean {
  const line = lines[i]!;
  if (!MAIL_HEADER.test(line)) return false;
  if (/^\s*from\s*:/i.test(line) && /@|<|\b(?:sent|date)\b/i.test(`${line}\n${lines[i + 1] ?? ''}`))
    return true;
  return MAIL_HEADER.test(lines[i + 1] ?? '');
}

function blankBefore(lines: readonly string[], i: number): boolean {
  return i > 0 && lines[i - 1]!.trim() === '';
}

/** A paragraph of `LONG_RUN_CHARS` or more among the user's own lines, when there are other paragraphs. */
function moveLongRuns(own: string[], carried: string[]): void {
  const paragraphs = own.join('\n').split(/\n\s*\n/);
  if (paragraphs.length < 2 || !paragraphs.some((p) => p.length >= LONG_RUN_CHARS)) return;
  own.length = 0;
  for (const p of paragraphs) (p.length >= LONG_RUN_CHARS ? carried : own).push(p);
}

/**
 * "<pasted text>\n\nIs this legit?": when the message's last paragraph is a short question about what
 * came before, the paragraphs before it are carried.
 */
function moveAboveQuestion(message: string, own: string[], carried: string[]): void {
  const paragraphs = own
    .join('\n')
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const last = paragraphs.at(-1);
  if (paragraphs.length < 2 || last === undefined || last.length > 200) return;
  if (!ABOUT_THE_ABOVE.test(last) || !message.trimEnd().endsWith(last.slice(-20))) return;
  own.length = 0;
  own.push(last);
  carried.push(...paragraphs.slice(0, -1));
}
