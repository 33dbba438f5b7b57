import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';

/**
 * Byte-pair encoding of one long pre-tokenized piece in O(n log n).
 *
 * gpt-tokenizer (like tiktoken's reference) rescans every pair after each merge, so one piece of n bytes
 * costs O(n²): a run of 80k letters took 15.7 s, and a model or tool can send one at will. This is the
 * same algorithm — always merge the lowest-ranked adjacent pair, the leftmost on ties — with the candidate
 * pairs in a min-heap, so the result is token for token the same and the cost grows as n log n.
 * Ordinary pieces are a few bytes long and stay with gpt-tokenizer (see `./tokenizer.ts`).
 */

interface Vocabulary {
  /** Rank of a token, keyed by its bytes as a latin1 string. */
  rankOf: Map<string, number>;
  /** Bytes of each rank as a latin1 string. */
  bytesOf: string[];
}

let vocabulary: Vocabulary | undefined;
/** Any character outside ASCII. */
const NON_ASCII = /[^\p{ASCII}]/u;

/** o200k_base's ~200k tokens both ways, built on first use (a fraction of a second, once per process). */
function loadVocabulary(): Vocabulary {
  if (vocabulary) return vocabulary;
  const rankOf = new Map<string, number>();
  const bytesOf: string[] = [];
  bpeRanks.forEach((token, rank) => {
    // ASCII text is its own latin1 byte string; only the rest needs converting.
    const bytes =
      typeof token === 'string'
        ? !NON_ASCII.test(token)
          ? token
          : Buffer.from(token, 'utf8').toString('latin1')
        : Buffer.from(token).toString('latin1');
    rankOf.set(bytes, rank);
    bytesOf[rank] = bytes;
  });
  vocabulary = { rankOf, bytesOf };
  return vocabulary;
}

/** Ranks fit in 18 bits, so a pair of ranks is one number. */
const PAIR = 2 ** 18;
const NO_MERGE = -1;
/** What two adjacent tokens merge into (or NO_MERGE); long pieces repeat few distinct pairs. */
const mergeOf = new Map<number, number>();
const MAX_REMEMBERED_PAIRS = 1_000_000;

function merged(words: Vocabulary, left: number, right: number): number {
  const key = left * PAIR + right;
  let rank = mergeOf.get(key);
  if (rank === undefined) {
    rank = words.rankOf.get(words.bytesOf[left]! + words.bytesOf[right]!) ?? NO_MERGE;
    if (mergeOf.size >= MAX_REMEMBERED_PAIRS) mergeOf.clear();
    mergeOf.set(key, rank);
  }
  return rank;
}

/** Bytes in the UTF-8 text of a token. */
export function tokenByteLength(rank: number): number {
  return loadVocabulary().bytesOf[rank]?.length ?? 0;
}

/** A binary min-heap of numbers (rank × 2³² + position: the lowest rank first, then the leftmost). */
class NumberHeap {
  readonly #items: number[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(value: number): void {
    const items = this.#items;
    let at = items.length;
    items.push(value);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (items[parent]! <= value) break;
      items[at] = items[parent]!;
      at = parent;
    }
    items[at] = value;
  }

  pop(): number {
    const items = this.#items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= items.length) break;
        const right = left + 1;
        const child = right < items.length && items[right]! < items[left]! ? right : left;
        if (items[child]! >= last) break;
        items[at] = items[child]!;
        at = child;
      }
      items[at] = last;
    }
    return top;
  }
}

const POSITION = 2 ** 32;

/** The o200k_base token ranks of one pre-tokenized piece. */
export function encodeLongPiece(piece: string): number[] {
  const words = loadVocabulary();
  const bytes = Buffer.from(piece, 'utf8');
  const n = bytes.length;
  // Each live part starts at a byte offset and holds one token; parts are linked in order.
  const token = new Int32Array(n);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    // Every single byte is a token.
    token[i] = words.rankOf.get(String.fromCharCode(bytes[i]!))!;
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
    alive[i] = 1;
  }
  const heap = new NumberHeap();
  const offer = (left: number) => {
    const right = next[left]!;
    if (right < 0) return;
    const rank = merged(words, token[left]!, token[right]!);
    if (rank !== NO_MERGE) heap.push(rank * POSITION + left);
  };
  for (let i = 0; i + 1 < n; i++) offer(i);

  while (heap.size > 0) {
    const item = heap.pop();
    const left = item % POSITION;
    const rank = (item - left) / POSITION;
    const right = next[left]!;
    // Entries go stale when a neighbour merged first; the live pair then merges into another rank.
    if (!alive[left] || right < 0 || merged(words, token[left]!, token[right]!) !== rank) continue;
    token[left] = rank;
    alive[right] = 0;
    next[left] = next[right]!;
    if (next[left]! >= 0) prev[next[left]!] = left;
    offer(left);
    if (prev[left]! >= 0) offer(prev[left]!);
  }

  const tokens: number[] = [];
  for (let at = n > 0 ? 0 : -1; at >= 0; at = next[at]!) tokens.push(token[at]!);
  return tokens;
}
