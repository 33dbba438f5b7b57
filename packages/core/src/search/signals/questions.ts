/**
 * How much of a text asks rather than tells: a conversation turn that asks ("What got you into running?")
 * holds less of what a later question is about than the turn that answers it (the context signal lifts the
 * answer through it). Any language that ends questions with "?" (or "？", "¿…?").
 */

// A sentence: up to and with its end marks and any closing quotes or brackets, or the rest of the text.
const SENTENCE = /[^.!?。！？]+(?:[.!?。！？]+["'”’»)\]]*|$)/gu;

/** The share (0–1) of the text's characters that are in sentences ending with a question mark. */
export function questionShare(text: string): number {
  let asked = 0;
  let all = 0;
  for (const sentence of text.match(SENTENCE) ?? []) {
    const length = sentence.trim().length;
    all += length;
    if (/[?？]/u.test(sentence)) asked += length;
  }
  return all > 0 ? asked / all : 0;
}
