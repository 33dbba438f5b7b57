import type { Tokenizer } from '../../tokens/tokenizer.js';

export interface TextChunk {
  index: number;
  text: string;
  tokenCount: number;
}

const PARAGRAPH_BREAK = /\n\s*\n/;
const SENTENCE_END = /(?<=[.!?])\s+(?=\S)/;

/**
 * Characters per token above which a text is not worth counting as a whole before splitting it.
 * BPE on one long unbroken "word" is quadratic, so huge pieces go straight to the windowed hard split.
 */
const COUNT_WINDOW_CHARS_PER_TOKEN = 16;
/** Window for the hard split: about one chunk of ordinary text (≈4 characters per token). */
const HARD_SPLIT_CHARS_PER_TOKEN = 4;

/**
 * Split text into chunks of at most `maxTokens` tokens, preferring paragraph, then sentence boundaries;
 * a single sentence longer than the limit is cut on token boundaries.
 */
export function chunkText(text: string, tokenizer: Tokenizer, maxTokens: number): TextChunk[] {
  const fits = (piece: string) =>
    piece.length <= maxTokens * COUNT_WINDOW_CHARS_PER_TOKEN && tokenizer.count(piece) <= maxTokens;
  const pieces: string[] = [];
  for (const paragraph of text.split(PARAGRAPH_BREAK)) {
    const trimmed = paragraph.trim();
    if (!trimmed) continue;
    if (fits(trimmed)) pieces.push(trimmed);
    else {
      for (const sentence of trimmed.split(SENTENCE_END)) {
        if (fits(sentence)) pieces.push(sentence.trim());
        else pieces.push(...hardSplit(sentence, tokenizer, maxTokens));
      }
    }
  }

  const chunks: TextChunk[] = [];
  let current = '';
  let currentTokens = 0;
  const flush = () => {
    if (current) chunks.push({ index: chunks.length, text: current, tokenCount: currentTokens });
    current = '';
    currentTokens = 0;
  };
  for (const piece of pieces) {
    if (!piece) continue;
    const joined = current ? `${current}\n\n${piece}` : piece;
    const joinedTokens = tokenizer.count(joined);
    if (current && joinedTokens > maxTokens) {
      flush();
      current = piece;
      currentTokens = tokenizer.count(piece);
    } else {
      current = joined;
      currentTokens = joinedTokens;
    }
  }
  flush();
  return chunks;
}

/** Cut `text` into pieces of at most `maxTokens` tokens, tokenizing one bounded window at a time. */
function hardSplit(text: string, tokenizer: Tokenizer, maxTokens: number): string[] {
  const out: string[] = [];
  let rest = text.trim();
  const window = Math.max(1, maxTokens * HARD_SPLIT_CHARS_PER_TOKEN);
  while (rest) {
    const head = tokenizer.truncate(rest.slice(0, window), maxTokens);
    // A cut inside a multi-byte character can decode to nothing; always make progress.
    const taken = head.length > 0 ? head : rest.slice(0, 1);
    out.push(taken);
    rest = rest.slice(taken.length);
  }
  return out.map((piece) => piece.trim()).filter(Boolean);
}

/**
 * Split text into chunks of whole lines, each of at most `maxTokens` tokens, keeping the text exactly as it
 * is (a chunk is a run of consecutive lines joined by their newlines): the unit for tool outputs such as
 * logs, listings, CSV and pretty-printed JSON, where a line is a record. A line longer than the limit is
 * cut on token boundaries into chunks of its own. Empty lines are kept inside chunks, never alone.
 */
export function chunkLines(text: string, tokenizer: Tokenizer, maxTokens: number): TextChunk[] {
  const chunks: TextChunk[] = [];
  let lines: string[] = [];
  let tokens = 0;
  const flush = () => {
    const body = lines.join('\n');
    if (body.trim()) chunks.push({ index: chunks.length, text: body, tokenCount: tokenizer.count(body) });
    lines = [];
    tokens = 0;
  };
  for (const line of text.split('\n')) {
    // A huge line is not worth counting whole (see COUNT_WINDOW_CHARS_PER_TOKEN): it is cut anyway.
    const lineTokens =
      line.length <= maxTokens * COUNT_WINDOW_CHARS_PER_TOKEN
        ? tokenizer.count(line)
        : Number.POSITIVE_INFINITY;
    const cost = lineTokens + (lines.length > 0 ? 1 : 0);
    if (tokens + cost <= maxTokens) {
      lines.push(line);
      tokens += cost;
      continue;
    }
    flush();
    if (lineTokens <= maxTokens) {
      lines.push(line);
      tokens = lineTokens;
    } else {
      for (const piece of hardSplit(line, tokenizer, maxTokens)) {
        chunks.push({ index: chunks.length, text: piece, tokenCount: tokenizer.count(piece) });
      }
    }
  }
  flush();
  return chunks;
}
