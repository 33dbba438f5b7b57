import { countPiece } from './o200k-bpe.js';

/**
 * The token counts of short pieces, remembered: words, numbers and punctuation recur (a few thousand
 * distinct pieces in a megabyte of prose, JSON or code), so most pieces cost one lookup. A piece is looked
 * up where it stands in the text, by a hash of its characters, so a hit allocates nothing (a `Map` keyed by
 * the piece would need it cut out of the text and hashed as a new string every time). Counts, not tokens:
 * counting is what every budget does, and a count needs no array per piece (truncation encodes its pieces).
 */
const SLOT_BITS = 18;
const SLOTS = 1 << SLOT_BITS;
/** Cleared when full (load ≤ 0.4), not kept in LRU order: the frequent pieces come back within a few hundred. */
const MAX_PIECES = 100_000;

/** 1 + index into `pieces` and `counts`, or 0 for an empty slot (open addressing, linear probing). */
const slots = new Int32Array(SLOTS);
const pieces: string[] = [];
const counts = new Int32Array(MAX_PIECES);

/** The token count of `text.slice(start, end)`, a pre-tokenized piece. */
export function cachedPieceCount(text: string, start: number, end: number): number {
  let hash = end - start;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  let slot = (hash ^ (hash >>> 13)) >>> (32 - SLOT_BITS);
  for (let kept = slots[slot]!; kept !== 0; kept = slots[slot]!) {
    const piece = pieces[kept - 1]!;
    if (piece.length === end - start && sameAt(text, start, piece)) return counts[kept - 1]!;
    slot = (slot + 1) & (SLOTS - 1);
  }
  const piece = text.slice(start, end);
  const count = countPiece(piece);
  if (pieces.length >= MAX_PIECES) {
    // The slot found stays empty after clearing, so it is still on this piece's probe path.
    slots.fill(0);
    pieces.length = 0;
  }
  counts[pieces.length] = count;
  pieces.push(piece);
  slots[slot] = pieces.length;
  return count;
}

function sameAt(text: string, start: number, piece: string): boolean {
  for (let i = 0; i < piece.length; i++) if (text.charCodeAt(start + i) !== piece.charCodeAt(i)) return false;
  return true;
}
