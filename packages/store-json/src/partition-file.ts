import { randomInt } from 'node:crypto';

/**
 * The text of a partition file (format 2): a header, then one record per line, so a write joins the
 * records' JSON without re-encoding them and a read takes each record's JSON without parsing the file
 * twice. Still one JSON document a person can read and `jq` can query:
 *
 *     {
 *       "kind": "facts",
 *       "schemaVersion": 2,
 *       "version": 812735,
 *       "records": [
 *         {"key":"f-1","value":{"id":"f-1",…}},
 *         {"key":"f-2","value":{"id":"f-2",…}}
 *       ]
 *     }
 *
 * Format 1 (before the record seam: `{ "kind", "schemaVersion": 1, "records": [...] }` or a session's
 * `{ "kv", "transcript" }`) is read as one whole-partition record under the empty key at version 0; the
 * stores decode it as before and write format 2 on the partition's next change.
 */
export const FORMAT_VERSION = 2;

const KEY_START = '{"key":';
const VALUE_AT = ',"value":';

export interface ParsedPartition {
  version: number;
  records: Map<string, string>;
}

/** A first version for a new file: random, so a file deleted and created again never repeats a version. */
export function newVersion(): number {
  return randomInt(1, 2 ** 40);
}

export function formatPartitionFile(
  kind: string,
  version: number,
  records: ReadonlyMap<string, string>,
  indent: string,
): string {
  const lines: string[] = [];
  for (const [key, json] of records)
    lines.push(`${indent}${indent}${KEY_START}${JSON.stringify(key)}${VALUE_AT}${json}}`);
  return (
    `{\n${indent}"kind": ${JSON.stringify(kind)},\n${indent}"schemaVersion": ${FORMAT_VERSION},\n` +
    `${indent}"version": ${version},\n${indent}"records": [\n${lines.join(',\n')}\n${indent}]\n}\n`
  );
}

/** Parse a partition file of either format. Throws (a plain Error) when it is not one. */
export function parsePartitionFile(text: string): ParsedPartition {
  return parseLines(text) ?? parseWhole(text);
}

/** The fast path: the layout `formatPartitionFile` writes, record JSON sliced out of each line. */
function parseLines(text: string): ParsedPartition | undefined {
  const marker = '"records": [\n';
  const open = text.indexOf(marker);
  if (open === -1) return undefined;
  const head = /"schemaVersion": (\d+),\s*"version": (\d+),\s*$/.exec(text.slice(0, open));
  if (!head || Number(head[1]) !== FORMAT_VERSION) return undefined;
  const rest = text.slice(open + marker.length);
  // Only `]`, `}` and white space come after the records (record JSON has no raw line break).
  const close = rest.lastIndexOf(']');
  if (close === -1 || rest.slice(close + 1).trim() !== '}') return undefined;
  const body = rest.slice(0, close).trimEnd();
  const records = new Map<string, string>();
  const version = Number(head[2]);
  if (body === '') return { version, records };
  for (const raw of body.split(',\n')) {
    const line = raw.trimStart();
    if (!line.startsWith(KEY_START) || !line.endsWith('}')) return undefined;
    // A JSON string cannot hold an unescaped `"`, so the first `","value":` ends the key.
    const at = line.indexOf(`"${VALUE_AT}`, KEY_START.length + 1);
    if (at === -1) return undefined;
    const quoted = line.slice(KEY_START.length, at + 1);
    // Keys without escapes (ids, `t:…`, `k:…`) are the text between the quotes.
    const key = quoted.includes('\\') ? (JSON.parse(quoted) as unknown) : quoted.slice(1, -1);
    if (typeof key !== 'string' || quoted[0] !== '"') return undefined;
    records.set(key, line.slice(at + 1 + VALUE_AT.length, -1));
  }
  return { version, records };
}

/** Any other layout: the file parsed whole (format 2 reformatted by hand, or format 1). */
function parseWhole(text: string): ParsedPartition {
  const data = JSON.parse(text) as { schemaVersion?: unknown; version?: unknown; records?: unknown };
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('expected a JSON object');
  if (data.schemaVersion === FORMAT_VERSION) {
    if (!Number.isSafeInteger(data.version) || !Array.isArray(data.records)) {
      throw new Error('expected "version" (an integer) and "records" (an array)');
    }
    const records = new Map<string, string>();
    data.records.forEach((record: unknown, i) => {
      const { key, value } = (record ?? {}) as { key?: unknown; value?: unknown };
      if (typeof key !== 'string' || value === undefined) {
        throw new Error(`records[${i}]: expected { "key": string, "value": … }`);
      }
      records.set(key, JSON.stringify(value));
    });
    return { version: data.version as number, records };
  }
  if (data.schemaVersion === 1) return { version: 0, records: new Map([['', text]]) };
  throw new Error(
    `unsupported schemaVersion ${JSON.stringify(data.schemaVersion)} (this version of @kioku/store-json reads 1 and ${FORMAT_VERSION}; a newer file needs a newer @kioku/store-json)`,
  );
}
