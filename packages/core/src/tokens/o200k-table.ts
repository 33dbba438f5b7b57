import encodedTable from './vendor/o200k-ranks.js';

/**
 * The bytes of each o200k_base token as latin1 text (one character a byte), by rank; `undefined` for a
 * rank without a token. Decoded from the vendored table (see its header) on each call: the caller keeps it.
 */
export function o200kTokenBytes(): (string | undefined)[] {
  const table = Buffer.from(encodedTable, 'base64');
  const tokens: (string | undefined)[] = [];
  for (let at = 0; at < table.length; ) {
    const length = table[at]!;
    tokens.push(length === 0 ? undefined : table.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
  return tokens;
}
