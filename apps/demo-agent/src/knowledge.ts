import type { Scope } from '@kioku/core';
import type { DocumentStore } from '@kioku/core/store';
import { addDocumentFromSource } from '@kioku/extract';
import { resolveInSandbox } from './sandbox.js';

const URL_PATTERN = /^https?:\/\//i;
/** `file:`, `ftp:`, `data:` … (two letters at least, so a Windows drive `C:` is still a path). */
const SCHEME_PATTERN = /^[a-z][a-z0-9+.-]+:/i;

const chunks = (n: number) => `${n} chunk${n === 1 ? '' : 's'}`;

/** Where `source` is read from: an http(s) URL, or a path inside the sandbox. Throws for anything else. */
export async function knowledgeTarget(sandbox: string, source: string): Promise<string> {
  if (!URL_PATTERN.test(source) && SCHEME_PATTERN.test(source)) {
    throw new Error(
      `Refused: "${source}" — only http(s) URLs and paths in the sandbox (${sandbox}) can be learnt.`,
    );
  }
  return URL_PATTERN.test(source) ? new URL(source).href : resolveInSandbox(sandbox, source);
}

/**
 * Add a knowledge document from a file in the sandbox or an http(s) URL, through
 * `@kioku/extract` (.txt .md .pdf .docx .html). Paths are relative to the sandbox and refused outside it,
 * like read_file's. Learning a source again replaces the earlier copy, once the new one is stored.
 */
export async function learnDocument(
  store: DocumentStore,
  scope: Scope,
  sandbox: string,
  source: string,
): Promise<string> {
  const target = await knowledgeTarget(sandbox, source);
  const earlier = (await store.list(scope)).filter((d) => d.source.uri === target);
  const doc = await addDocumentFromSource(store, scope, target);
  for (const old of earlier) await store.delete(scope, old.id);
  return (
    `Learnt "${doc.title}" from ${source}: ${chunks(doc.chunks.length)}, ${doc.tokenCount} tokens` +
    `${earlier.length > 0 ? ' (replaces the earlier copy)' : ''}.`
  );
}

export async function showDocuments(store: DocumentStore, scope: Scope): Promise<string> {
  const docs = await store.list(scope);
  if (docs.length === 0) return 'No documents learnt yet (/learn <path-or-url>).';
  return docs
    .map(
      (d) =>
        `  [${d.id}] ${d.title} — ${chunks(d.chunks.length)}, ${d.tokenCount} tokens (${d.source.uri ?? d.source.type})`,
    )
    .join('\n');
}
