import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StorageError, ValidationError } from '@kioku/core';
import { fetchUrl, parseHttpUrl } from './fetch-url.js';
import { extractDocx } from './formats/docx.js';
import { extractHtml } from './formats/html.js';
import { extractPdf } from './formats/pdf.js';
import { extractPlain } from './formats/text.js';
import type { Extracted } from './formats/types.js';
import { charsetOf, detectMimeType, MIME_TYPES, type SupportedMimeType } from './mime.js';
import { normalizeText } from './normalize.js';

/**
 * What to read: a file path or an http(s) URL as a string (a string starting with `http://` or `https://`
 * is a URL, one with another scheme such as `ftp:` is refused, anything else is a path), a `URL`
 * (`http:`, `https:` or `file:`), or explicit objects — `{ path }`, `{ url }`, or bytes already in memory
 * as `{ data, name?, mimeType? }` (the name's extension or the MIME type tells the format).
 */
export type ExtractSource =
  | string
  | URL
  | { path: string; mimeType?: string }
  | { url: string | URL }
  | { data: Uint8Array; name?: string; mimeType?: string };

export interface ExtractOptions {
  /** Largest file, buffer or response body read, in bytes (default 50 MiB). */
  maxBytes?: number;
  /** URLs: time for the whole request, body included, in ms (default 30 s). */
  timeoutMs?: number;
  /** URLs: redirects followed, each checked to be http(s) (default 5). */
  maxRedirects?: number;
  /** URLs: the User-Agent header (default `kioku-extract`). */
  userAgent?: string;
  /** URLs: the fetch implementation (default the global `fetch`), e.g. one going through a proxy. */
  fetch?: typeof fetch;
  /** Abort reading; an aborted extraction rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Extracted text, ready for `DocumentStore.create` (see `addDocumentFromSource`). */
export interface ExtractedText {
  /** Normalized text: Unix line ends, no control characters, at most one blank line in a row, trimmed. */
  text: string;
  /** From the document itself: PDF information, Markdown `# H1`, HTML `<title>` or first `<h1>`. */
  title?: string;
  mimeType: SupportedMimeType;
  /** Where it came from, in the shape of core's `DocumentSource`. `uri` is absent for unnamed bytes. */
  source: { type: 'file' | 'url'; uri?: string; mimeType: SupportedMimeType };
}

export const EXTRACT_DEFAULTS = Object.freeze({
  maxBytes: 50 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
  userAgent: 'kioku-extract',
});

interface Loaded {
  bytes: Uint8Array;
  type: 'file' | 'url';
  uri: string | undefined;
  /** For the extension. */
  name: string | undefined;
  declaredType: string | undefined;
}

const SCANNED_PDF = 'a scanned PDF needs OCR, which is not supported';

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]+):/;

/**
 * Extract the text of a .txt, .md, .html, .pdf or .docx file, in-memory bytes, or an http(s) URL.
 * Throws ValidationError for an unsupported or unreadable format, input over `maxBytes`, a refused URL or a
 * document without text (e.g. a scanned PDF, which would need OCR), and StorageError when reading the file
 * or fetching the URL fails (missing file, network error, HTTP error status, timeout), with the cause.
 */
export async function extractText(
  source: ExtractSource,
  options: ExtractOptions = {},
): Promise<ExtractedText> {
  const loaded = await load(source, options);
  const mimeType = detectMimeType(loaded.declaredType, loaded.name, loaded.bytes);
  const where = loaded.uri ?? 'the data';
  if (!mimeType) {
    throw new ValidationError(
      `Unsupported document type for ${where}${loaded.declaredType ? ` (${loaded.declaredType})` : ''}: ` +
        'supported are .txt, .md, .html, .pdf and .docx.',
      { details: { uri: loaded.uri, mimeType: loaded.declaredType } },
    );
  }
  const extracted = await extractByType(mimeType, loaded.bytes, charsetOf(loaded.declaredType));
  const text = normalizeText(extracted.text);
  if (!text) {
    throw new ValidationError(
      `No text found in ${where}${mimeType === MIME_TYPES.pdf ? ` (${SCANNED_PDF})` : ''}.`,
      { details: { uri: loaded.uri, mimeType } },
    );
  }
  const title = extracted.title ? normalizeText(extracted.title).replace(/\s+/g, ' ') : '';
  return {
    text,
    ...(title ? { title } : {}),
    mimeType,
    source: { type: loaded.type, ...(loaded.uri ? { uri: loaded.uri } : {}), mimeType },
  };
}

function extractByType(mimeType: SupportedMimeType, bytes: Uint8Array, charset?: string): Promise<Extracted> {
  switch (mimeType) {
    case MIME_TYPES.text:
      return Promise.resolve(extractPlain(bytes, { markdown: false, charset }));
    case MIME_TYPES.markdown:
      return Promise.resolve(extractPlain(bytes, { markdown: true, charset }));
    case MIME_TYPES.html:
      return Promise.resolve(extractHtml(bytes, charset));
    case MIME_TYPES.pdf:
      return extractPdf(bytes);
    case MIME_TYPES.docx:
      return extractDocx(bytes);
  }
}

async function load(source: ExtractSource, options: ExtractOptions): Promise<Loaded> {
  const maxBytes = options.maxBytes ?? EXTRACT_DEFAULTS.maxBytes;
  if (typeof source === 'string') {
    const scheme = source.match(SCHEME)?.[1]?.toLowerCase();
    if (scheme === 'http' || scheme === 'https') return loadUrl(source, options);
    if (scheme === 'file') return loadFile(fileURLToPath(source), undefined, maxBytes);
    // A scheme of two letters or more is a URL (one letter is a Windows drive: C:\docs\a.pdf).
    if (scheme) return loadUrl(source, options);
    return loadFile(source, undefined, maxBytes);
  }
  if (source instanceof URL) {
    return source.protocol === 'file:'
      ? loadFile(fileURLToPath(source), undefined, maxBytes)
      : loadUrl(source, options);
  }
  if ('url' in source) return loadUrl(source.url, options);
  if ('path' in source) return loadFile(source.path, source.mimeType, maxBytes);
  if ('data' in source && source.data instanceof Uint8Array) {
    if (source.data.byteLength > maxBytes) throw tooLarge(source.name ?? 'The data', maxBytes);
    return {
      bytes: source.data,
      type: 'file',
      uri: source.name,
      name: source.name,
      declaredType: source.mimeType,
    };
  }
  throw new ValidationError('A source is a path, a URL, { path }, { url } or { data: Uint8Array }.');
}

async function loadUrl(input: string | URL, options: ExtractOptions): Promise<Loaded> {
  const url = parseHttpUrl(input);
  const fetched = await fetchUrl(url, {
    maxBytes: options.maxBytes ?? EXTRACT_DEFAULTS.maxBytes,
    timeoutMs: options.timeoutMs ?? EXTRACT_DEFAULTS.timeoutMs,
    maxRedirects: options.maxRedirects ?? EXTRACT_DEFAULTS.maxRedirects,
    userAgent: options.userAgent ?? EXTRACT_DEFAULTS.userAgent,
    fetch: options.fetch ?? globalThis.fetch,
    signal: options.signal,
  });
  return {
    bytes: fetched.bytes,
    type: 'url',
    uri: url.href,
    name: new URL(fetched.finalUrl).pathname,
    declaredType: fetched.contentType,
  };
}

async function loadFile(path: string, declaredType: string | undefined, maxBytes: number): Promise<Loaded> {
  let bytes: Uint8Array;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new ValidationError(`${path} is not a file.`, { details: { path } });
    if (info.size > maxBytes) throw tooLarge(path, maxBytes);
    bytes = await readFile(path);
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const code = (error as NodeJS.ErrnoException)?.code;
    throw new StorageError(`Cannot read ${path}${code ? ` (${code})` : ''}.`, {
      cause: error,
      details: { path, ...(code ? { errno: code } : {}) },
    });
  }
  return { bytes, type: 'file', uri: path, name: basename(path), declaredType };
}

function tooLarge(what: string, maxBytes: number): ValidationError {
  return new ValidationError(`${what} is larger than the ${maxBytes}-byte limit.`, {
    details: { maxBytes },
  });
}
