import type { KeyedRecord, PartitionCodec } from '../backend/partition.js';
import type { RecordPartition } from '../backend/record-partition.js';
import type { KnowledgeDocument } from './record.js';

/**
 * How a document is kept by a record-level backend: one record for the document without its text and
 * chunks (key: its id), its text in parts (`<id>:t:<n>`, at most `TEXT_PART_CHARS` characters each) and
 * one record per chunk (`<id>:c:<n>`), so no record of a long document nears the backend's size limit.
 */
export const TEXT_PART_CHARS = 50_000;

const TEXT = ':t:';
const CHUNK = ':c:';

/** Records of each stored document, remembered: an unchanged document reuses its records (and their JSON). */
const recordsOfDocument = new WeakMap<KnowledgeDocument, KeyedRecord[]>();

function documentRecords(doc: KnowledgeDocument): KeyedRecord[] {
  let records = recordsOfDocument.get(doc);
  if (!records) {
    const { text, chunks, ...rest } = doc;
    const parts: string[] = [];
    for (let at = 0; at < text.length; at += TEXT_PART_CHARS)
      parts.push(text.slice(at, at + TEXT_PART_CHARS));
    records = [
      { key: doc.id, value: { ...rest, textParts: parts.length } },
      ...parts.map((value, i) => ({ key: `${doc.id}${TEXT}${i}`, value })),
      ...chunks.map((value) => ({ key: `${doc.id}${CHUNK}${value.index}`, value })),
    ];
    recordsOfDocument.set(doc, records);
  }
  return records;
}

interface Assembling {
  head: Record<string, unknown>;
  parts: Array<{ n: number; text: unknown }>;
  chunks: Array<{ n: number; chunk: unknown }>;
}

/** Raw documents (to validate) from their records; throws on a record that fits no document. */
function assembleDocuments(records: readonly KeyedRecord[]): unknown[] {
  const docs = new Map<string, Assembling>();
  const orphans: KeyedRecord[] = [];
  for (const record of records) {
    const cut = record.key.indexOf(':');
    if (cut === -1) {
      docs.set(record.key, { head: record.value as Record<string, unknown>, parts: [], chunks: [] });
    } else orphans.push(record);
  }
  for (const { key, value } of orphans) {
    const id = key.slice(0, key.indexOf(':'));
    const doc = docs.get(id);
    const rest = key.slice(id.length);
    if (!doc) throw new Error(`record "${key}" belongs to no stored document`);
    if (rest.startsWith(TEXT)) doc.parts.push({ n: Number(rest.slice(TEXT.length)), text: value });
    else if (rest.startsWith(CHUNK)) doc.chunks.push({ n: Number(rest.slice(CHUNK.length)), chunk: value });
    else throw new Error(`unexpected document record key "${key}"`);
  }
  return [...docs.values()].map(({ head, parts, chunks }) => {
    const { textParts, ...doc } = head;
    if (parts.length !== textParts) {
      throw new Error(
        `document "${String(doc.id)}" has ${parts.length} of its ${String(textParts)} text parts`,
      );
    }
    return {
      ...doc,
      text: parts
        .sort((a, b) => a.n - b.n)
        .map((p) => p.text)
        .join(''),
      chunks: chunks.sort((a, b) => a.n - b.n).map((c) => c.chunk),
    };
  });
}

/** The document codec with one record per document head, text part and chunk. */
export function documentRecordsCodec(
  codec: PartitionCodec<RecordPartition<KnowledgeDocument>>,
): PartitionCodec<RecordPartition<KnowledgeDocument>> {
  // A document is several records: its changes are found by comparing them (the codec's tracking is per document).
  const { track: _track, tracked: _tracked, ...base } = codec;
  return {
    ...base,
    toRecords: (state) => [...state.records.values()].flatMap(documentRecords),
    fromRecords: (records) =>
      codec.decode({ kind: 'documents', schemaVersion: 1, records: assembleDocuments(records) }),
  };
}
