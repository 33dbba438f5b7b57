import { o200kTokenBytes } from './o200k-table.js';

/**
 * o200k_base's byte-pair encoding of one pre-tokenized piece, in O(n log n) and without allocating per pair.
 *
 * gpt-tokenizer (like tiktoken's reference) rescans every pair after each merge, so one piece of n bytes
 * costs O(n²) ('A' × 80k took 15.7 s), and each pair it tries is a `subarray`, a UTF-8 validation and a
 * `TextDecoder` call before its map lookup. This is the same algorithm — always merge the lowest-ranked
 * adjacent pair, the leftmost on ties — with the next merge kept at the root of a tournament tree and
 * "what do these two tokens merge into" answered by integer arithmetic over a table built once (see
 * `merged`), so the result is token for token the same. Scratch arrays are reused, so a call allocates
 * only its result.
 */

/** Bytes of each rank as a latin1 string. */
const bytesOf: string[] = [];
/** Rank of each single byte (every byte is a token). */
const byteRank = new Int32Array(256);
/** How many tokens each pair of ASCII characters is (1 or 2), indexed first × 128 + second. */
const asciiPairTokens = new Uint8Array(0x80 * 0x80);
/** Bytes in the longest token (128 in o200k_base): a longer piece is never one token. */
let longestToken = 0;
let loaded = false;
/** o200k_base's ~200k tokens both ways, built on first use (a fraction of a second, once per process). */
function load(): void {
  if (loaded) return;
  o200kTokenBytes().forEach((bytes, rank) => {
    if (bytes === undefined) return;
    bytesOf[rank] = bytes;
    if (bytes.length === 1) byteRank[bytes.charCodeAt(0)] = rank;
    if (bytes.length > longestToken) longestToken = bytes.length;
  });
  buildTables();
  for (let first = 0; first < 0x80; first++) {
    for (let second = 0; second < 0x80; second++) {
      asciiPairTokens[(first << 7) | second] =
        joinedToken(byteRank[first]!, byteRank[second]!) === NO_MERGE ? 2 : 1;
    }
  }
  loaded = true;
}

/** Bytes in the UTF-8 text of a token. */
export function tokenByteLength(rank: number): number {
  load();
  return bytesOf[rank]?.length ?? 0;
}

const NO_MERGE = -1;

/*
 * What two adjacent tokens merge into: the token whose bytes are the left token's followed by the right
 * token's, if there is one. Two levels:
 *
 * - `pairs` remembers the answer for recent pairs: in most text the same pairs recur (a DNA alphabet has a
 *   few hundred), and one typed-array probe is the cheapest answer. It is direct-mapped (a pair overwrites
 *   whatever shared its slot) and 256 KB, so it stays in the processor's cache and costs random text, whose
 *   pairs rarely recur, one probe and nothing more.
 * - A new pair is looked up in a table over every token, built once: each token's bytes have a polynomial
 *   hash H (base HASH_BASE, mod 2^32), kept with HASH_BASE^length, so the hash of a concatenation is
 *   H(left) × HASH_BASE^length(right) + H(right) — two multiplications and a probe, verified against the
 *   bytes, without building the joined string. Random text (base64, CJK), whose pairs rarely recur, lives
 *   on this path.
 */
const PAIR_BITS = 14;
const PAIR_SLOTS = 1 << PAIR_BITS;
/** Slot i is left, right and merged rank at 4i, 4i + 1 and 4i + 2 (16 bytes: four slots per cache line). */
let pairs = new Int32Array(0);

const HASH_BASE = 0x01000193;
const TOKEN_BITS = 19;
/** 2^19 slots for ~200k tokens: a load of 0.38, about one probe per lookup, hit or miss. */
const TOKEN_SLOTS = 1 << TOKEN_BITS;
/** Rank + 1 of the token in each slot, 0 for an empty one. */
let tokenSlots = new Int32Array(0);
let tokenHash = new Int32Array(0);
let tokenPower = new Int32Array(0);

function tokenSlot(hash: number): number {
  const mixed = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  return (mixed ^ (mixed >>> 13)) >>> (32 - TOKEN_BITS);
}

function buildTables(): void {
  const count = bytesOf.length;
  pairs = new Int32Array(4 * PAIR_SLOTS).fill(-1);
  tokenSlots = new Int32Array(TOKEN_SLOTS);
  tokenHash = new Int32Array(count);
  tokenPower = new Int32Array(count);
  for (let rank = 0; rank < count; rank++) {
    const bytes = bytesOf[rank]!;
    let hash = 0;
    let power = 1;
    for (let i = 0; i < bytes.length; i++) {
      hash = (Math.imul(hash, HASH_BASE) + bytes.charCodeAt(i)) | 0;
      power = Math.imul(power, HASH_BASE);
    }
    tokenHash[rank] = hash;
    tokenPower[rank] = power;
    let slot = tokenSlot(hash);
    while (tokenSlots[slot] !== 0) slot = (slot + 1) & (TOKEN_SLOTS - 1);
    tokenSlots[slot] = rank + 1;
  }
}

/** The rank of the token that is `left`'s bytes then `right`'s, or -1 (for the tests; loads the tables). */
export function mergeOf(left: number, right: number): number {
  load();
  return merged(left, right);
}

function merged(left: number, right: number): number {
  let hash = Math.imul(left, 0x9e3779b1) ^ right;
  hash = Math.imul(hash ^ (hash >>> 15), 0x85ebca6b);
  const at = ((hash ^ (hash >>> 13)) >>> (32 - PAIR_BITS)) << 2;
  if (pairs[at] === left && pairs[at + 1] === right) return pairs[at + 2]!;
  const rank = joinedToken(left, right);
  pairs[at] = left;
  pairs[at + 1] = right;
  pairs[at + 2] = rank;
  return rank;
}

/** The token whose bytes are `left`'s then `right`'s, or NO_MERGE, from the table over every token. */
function joinedToken(left: number, right: number): number {
  const leftBytes = bytesOf[left]!;
  const rightBytes = bytesOf[right]!;
  const length = leftBytes.length + rightBytes.length;
  if (length > longestToken) return NO_MERGE;
  const hash = (Math.imul(tokenHash[left]!, tokenPower[right]!) + tokenHash[right]!) | 0;
  for (let slot = tokenSlot(hash); ; slot = (slot + 1) & (TOKEN_SLOTS - 1)) {
    const kept = tokenSlots[slot]! - 1;
    if (kept < 0) return NO_MERGE;
    if (tokenHash[kept] !== hash) continue;
    const bytes = bytesOf[kept]!;
    if (bytes.length === length && bytes.startsWith(leftBytes) && bytes.endsWith(rightBytes)) return kept;
  }
}

/** Longest piece `encodePiece` takes, in UTF-16 code units (at most 3 UTF-8 bytes each). */
export const MAX_PIECE_CHARS = 1024;
const MAX_BYTES = 3 * MAX_PIECE_CHARS;
/**
 * Candidate merges are keyed rank × 2^POSITION_BITS + byte offset (an int32): the lowest key is the
 * lowest rank, then the leftmost pair.
 */
const POSITION_BITS = 12;
const POSITION_MASK = (1 << POSITION_BITS) - 1;
/** The key of a part whose pair does not merge (or of a part merged away). */
const NONE = 0x7fffffff;

// Scratch space reused by every call: the piece's bytes and its parts (each starts at a byte offset and
// holds one token, linked in order).
const bytes = new Uint8Array(MAX_BYTES);
const token = new Int32Array(MAX_BYTES);
const next = new Int32Array(MAX_BYTES);
const prev = new Int32Array(MAX_BYTES);
/**
 * A tournament tree over the parts' keys: leaf `leaves + i` is part i's key, every inner node the
 * smaller of its two children, so the root is the next merge. Unlike a heap of candidates it holds no
 * stale entries (a merge rewrites three leaves in place), and a rewrite is a branch-free walk to the root.
 */
const tree = new Int32Array(2 * (1 << POSITION_BITS));
let leaves = 1;

function setKey(part: number, key: number): void {
  let at = leaves + part;
  let value = key;
  tree[at] = value;
  while (at > 1) {
    const sibling = tree[at ^ 1]!;
    // A ternary, not Math.min: V8 compiles it to one compare (Math.min must handle NaN and -0), ~20% of a merge.
    // biome-ignore lint/complexity/useMathMinMax: measured faster here (see the comment above).
    value = value < sibling ? value : sibling;
    at >>= 1;
    // The ancestors were computed from this value already.
    if (tree[at] === value) return;
    tree[at] = value;
  }
}

function keyOf(rank: number, part: number): number {
  return rank === NO_MERGE ? NONE : (rank << POSITION_BITS) | part;
}

/** Writes `piece` as UTF-8 into `bytes` (a lone surrogate as U+FFFD, as TextEncoder does); returns the length. */
function utf8(piece: string): number {
  let n = 0;
  for (let i = 0; i < piece.length; i++) {
    let code = piece.charCodeAt(i);
    if (code < 0x80) {
      bytes[n++] = code;
      continue;
    }
    if (code < 0x800) {
      bytes[n++] = 0xc0 | (code >> 6);
      bytes[n++] = 0x80 | (code & 0x3f);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const low = piece.charCodeAt(i + 1);
      if (code <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
        bytes[n++] = 0xf0 | (code >> 18);
        bytes[n++] = 0x80 | ((code >> 12) & 0x3f);
        bytes[n++] = 0x80 | ((code >> 6) & 0x3f);
        bytes[n++] = 0x80 | (code & 0x3f);
        continue;
      }
      code = 0xfffd;
    }
    bytes[n++] = 0xe0 | (code >> 12);
    bytes[n++] = 0x80 | ((code >> 6) & 0x3f);
    bytes[n++] = 0x80 | (code & 0x3f);
  }
  return n;
}

/** The o200k_base token ranks of one pre-tokenized piece of at most MAX_PIECE_CHARS code units. */
export function encodePiece(piece: string): number[] {
  const n = prepare(piece);
  if (n <= 1) return n === 0 ? [] : [byteRank[bytes[0]!]!];
  const whole = wholeToken(n);
  if (whole !== NO_MERGE) return [whole];
  mergeAll(n);
  const tokens: number[] = [];
  for (let at = 0; at >= 0; at = next[at]!) tokens.push(token[at]!);
  return tokens;
}

/** How many o200k_base tokens `encodePiece(piece)` gives, without building them. */
export function countPiece(piece: string): number {
  const n = prepare(piece);
  if (n <= 1 || wholeToken(n) !== NO_MERGE) return Math.min(n, 1);
  return mergeAll(n);
}

/**
 * The token count of a piece of one to three ASCII characters at `text[start..end)`, or -1 when the piece
 * is longer or not ASCII; half of base64's pieces and many of JSON's and code's are this short, and this
 * answers them without encoding. One byte is one token; two are one token when they form one; three are
 * one token when they form one, else two when either adjacent pair merges (the merged pair and the third
 * byte could only merge into the three bytes, which are not a token), else three.
 */
export function countShortAscii(text: string, start: number, end: number): number {
  const length = end - start;
  if (length > 3) return -1;
  const first = text.charCodeAt(start);
  if (length === 1) return first < 0x80 ? 1 : -1;
  const second = text.charCodeAt(start + 1);
  const third = length === 3 ? text.charCodeAt(start + 2) : 0;
  if ((first | second | third) >= 0x80) return -1;
  load();
  const pair = asciiPairTokens[(first << 7) | second]!;
  if (length === 2) return pair;
  bytes[0] = first;
  bytes[1] = second;
  bytes[2] = third;
  if (wholeToken(3) !== NO_MERGE) return 1;
  return pair === 1 || asciiPairTokens[(second << 7) | third] === 1 ? 2 : 3;
}

/** Loads the tables and writes `piece` as UTF-8 into `bytes`; returns its length in bytes. */
function prepare(piece: string): number {
  if (piece.length > MAX_PIECE_CHARS) throw new RangeError(`piece over ${MAX_PIECE_CHARS} characters`);
  load();
  return utf8(piece);
}

/**
 * The token that is the whole piece (`bytes[0..n)`), or NO_MERGE: a piece that is a token is that token,
 * whatever the merges would give (as in tiktoken). Looked up like a joined pair, by the hash of its bytes.
 */
function wholeToken(n: number): number {
  if (n > longestToken) return NO_MERGE;
  let hash = 0;
  for (let i = 0; i < n; i++) hash = (Math.imul(hash, HASH_BASE) + bytes[i]!) | 0;
  for (let slot = tokenSlot(hash); ; slot = (slot + 1) & (TOKEN_SLOTS - 1)) {
    const kept = tokenSlots[slot]! - 1;
    if (kept < 0) return NO_MERGE;
    if (tokenHash[kept] !== hash) continue;
    const text = bytesOf[kept]!;
    if (text.length !== n) continue;
    let same = true;
    for (let i = 0; i < n && same; i++) same = text.charCodeAt(i) === bytes[i];
    if (same) return kept;
  }
}

/**
 * Runs every merge over the parts of `bytes[0..n)` (n ≥ 2), leaving them linked from part 0 through
 * `next`; returns how many parts (tokens) are left.
 */
function mergeAll(n: number): number {
  leaves = 2;
  while (leaves < n) leaves <<= 1;
  for (let i = 0; i < n; i++) {
    token[i] = byteRank[bytes[i]!]!;
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  for (let i = 0; i + 1 < n; i++) tree[leaves + i] = keyOf(merged(token[i]!, token[i + 1]!), i);
  tree.fill(NONE, leaves + n - 1, 2 * leaves);
  for (let at = leaves - 1; at >= 1; at--) tree[at] = Math.min(tree[2 * at]!, tree[2 * at + 1]!);

  let parts = n;
  for (let key = tree[1]!; key !== NONE; key = tree[1]!) {
    const left = key & POSITION_MASK;
    const rank = key >>> POSITION_BITS;
    const right = next[left]!;
    const after = next[right]!;
    token[left] = rank;
    next[left] = after;
    if (after >= 0) prev[after] = left;
    setKey(right, NONE);
    setKey(left, after >= 0 ? keyOf(merged(rank, token[after]!), left) : NONE);
    const before = prev[left]!;
    if (before >= 0) setKey(before, keyOf(merged(token[before]!, rank), before));
    parts--;
  }
  return parts;
}
