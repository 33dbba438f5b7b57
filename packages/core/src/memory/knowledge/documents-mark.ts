import type { KnowledgeDocument } from '../../store/documents/record.js';

interface Part {
  mark: string;
  /** What the mark was made of, checked on every use (string and number identity: cheap). */
  of: readonly unknown[];
}

/** Each listed document's part of the mark, per document record: a turn lists the same records again. */
const parts = new WeakMap<KnowledgeDocument, Part>();

/** The fields of a document that its part of the mark stands for. */
function fields(d: KnowledgeDocument): unknown[] {
  return [
    d.id,
    d.addedAt,
    d.tokenCount,
    d.text.length,
    d.title,
    d.source.uri ?? null,
    d.metadata.trust ?? null,
  ];
}

function partOf(d: KnowledgeDocument): string {
  const known = parts.get(d);
  if (
    known !== undefined &&
    known.of[0] === d.id &&
    known.of[1] === d.addedAt &&
    known.of[2] === d.tokenCount &&
    known.of[3] === d.text.length &&
    known.of[4] === d.title &&
    known.of[5] === (d.source.uri ?? null) &&
    known.of[6] === (d.metadata.trust ?? null)
  )
    return known.mark;
  const of = fields(d);
  const mark = JSON.stringify(of);
  parts.set(d, { mark, of });
  return mark;
}

/**
 * What a full-text knowledge block is built from, as one string: each listed document's id, time added,
 * size, title, source and trust. Documents are never edited in place (a new text is a new document), so
 * the same mark means the same documents.
 */
export function documentsMark(documents: readonly KnowledgeDocument[]): string {
  let mark = '[';
  for (let i = 0; i < documents.length; i++)
    mark += i === 0 ? partOf(documents[i]!) : `,${partOf(documents[i]!)}`;
  return `${mark}]`;
}
