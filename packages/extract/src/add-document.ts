import { basename } from 'node:path';
import type { KnowledgeDocument, Scope } from '@kioku/core';
import type { DocumentInput, DocumentStore, Metadata } from '@kioku/core/store';
import { type ExtractedText, type ExtractOptions, type ExtractSource, extractText } from './extract.js';

export interface AddDocumentOptions extends ExtractOptions {
  id?: string;
  /** Overrides the extracted title. */
  title?: string;
  description?: string;
  tags?: string[];
  metadata?: Metadata;
}

const TITLE_CHARS = 200;

/** The extracted title, else the file name, else the URL's host and path, else "Untitled document". */
export function titleFor(extracted: ExtractedText): string {
  if (extracted.title) return extracted.title.slice(0, TITLE_CHARS);
  const uri = extracted.source.uri;
  if (!uri) return 'Untitled document';
  if (extracted.source.type === 'url') {
    const url = new URL(uri);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`.slice(0, TITLE_CHARS);
  }
  return basename(uri).slice(0, TITLE_CHARS) || 'Untitled document';
}

/**
 * Extract a file's or URL's text and add it to a DocumentStore under `scope`. For knowledge every user of
 * an agent shares, add it under the owner scope the knowledge feature reads (e.g. `{ userId: 'shared',
 * agentId: 'python-expert' }`). Errors are those of `extractText` and `DocumentStore.create`.
 */
export async function addDocumentFromSource(
  store: DocumentStore,
  scope: Scope,
  source: ExtractSource,
  options: AddDocumentOptions = {},
): Promise<KnowledgeDocument> {
  const { id, title, description, tags, metadata, ...extractOptions } = options;
  const extracted = await extractText(source, extractOptions);
  const input: DocumentInput = {
    title: title ?? titleFor(extracted),
    text: extracted.text,
    source: extracted.source,
    ...(id === undefined ? {} : { id }),
    ...(description === undefined ? {} : { description }),
    ...(tags === undefined ? {} : { tags }),
    ...(metadata === undefined ? {} : { metadata }),
  };
  return store.create(scope, input);
}
