import type { Tokenizer } from '../../tokens/tokenizer.js';

const MAX_KEYS_SHOWN = 8;

function listKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, MAX_KEYS_SHOWN).join(', ');
  return keys.length > MAX_KEYS_SHOWN ? `${shown}, … (${keys.length} keys)` : shown;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The shape of a JSON document in one line, or null when `content` is not JSON. */
export function describeJsonShape(content: string): string | null {
  const text = content.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(value)) {
    const first = value[0];
    const isRecord = first !== null && typeof first === 'object' && !Array.isArray(first);
    const items = isRecord
      ? `, items are objects with keys ${listKeys(Object.keys(first as object))}`
      : value.length > 0
        ? `, items are ${Array.isArray(first) ? 'arrays' : first === null ? 'null' : typeof first}`
        : '';
    return `JSON array of ${plural(value.length, 'item')}${items}`;
  }
  const keys = Object.keys(value as object);
  return keys.length === 0 ? 'JSON object (empty)' : `JSON object with keys ${listKeys(keys)}`;
}

/** The first whole lines of `text` that fit in `maxTokens` (the first line cut on a token boundary if needed). */
export function leadingLines(text: string, maxTokens: number, tokenizer: Tokenizer): string {
  if (maxTokens <= 0) return '';
  const lines = text.split('\n');
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    // +1 for the newline joining it to the previous line.
    const cost = tokenizer.count(line) + (kept.length > 0 ? 1 : 0);
    if (used + cost > maxTokens) break;
    kept.push(line);
    used += cost;
  }
  if (kept.length === 0) return `${tokenizer.truncate(lines[0] ?? '', maxTokens).trimEnd()}…`;
  const out = kept.join('\n').trimEnd();
  return kept.length < lines.length ? `${out}\n…` : out;
}

/**
 * The default, extractive summary (no model call): the size in lines, the shape when the output is JSON,
 * then the first lines of the output, all within `maxTokens`. Logs and listings usually say what they are
 * in their first lines; for JSON the shape (array length, keys) tells more than the first characters.
 */
export function extractiveSummary(content: string, maxTokens: number, tokenizer: Tokenizer): string {
  const lineCount = content.split('\n').length;
  const shape = describeJsonShape(content);
  const head = shape
    ? `${shape}; ${plural(lineCount, 'line')}. Begins:`
    : `${plural(lineCount, 'line')}. Begins:`;
  const headTokens = tokenizer.count(head) + 1;
  if (headTokens >= maxTokens) return tokenizer.truncate(head, maxTokens);
  return `${head}\n${leadingLines(content, maxTokens - headTokens, tokenizer)}`;
}
