import type { KnowledgeDocument } from '../../store/documents/record.js';

/**
 * What a full-text knowledge block is built from, as one string: each listed document's id, time added,
 * size, title, source and trust. Documents are never edited in place (a new text is a new document), so
 * the same mark means the same documents.
 */
export function documentsMark(documents: readonly KnowledgeDocument[]): string {
  return JSON.stringify(
    documents.map((d) => [
      d.id,
      d.addedAt,
      d.tokenCount,
      d.text.length,
      d.title,
      d.source.uri ?? null,
      d.metadata.trust ?? null,
    ]),
  );
}
