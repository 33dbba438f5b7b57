import { extname } from 'node:path';

/** The formats `extractText` reads. */
export const MIME_TYPES = Object.freeze({
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
});

export type SupportedMimeType = (typeof MIME_TYPES)[keyof typeof MIME_TYPES];

const BY_EXTENSION: Readonly<Record<string, SupportedMimeType>> = {
  '.txt': MIME_TYPES.text,
  '.text': MIME_TYPES.text,
  '.md': MIME_TYPES.markdown,
  '.markdown': MIME_TYPES.markdown,
  '.html': MIME_TYPES.html,
  '.htm': MIME_TYPES.html,
  '.pdf': MIME_TYPES.pdf,
  '.docx': MIME_TYPES.docx,
};

const ALIASES: Readonly<Record<string, SupportedMimeType>> = {
  'text/plain': MIME_TYPES.text,
  'text/markdown': MIME_TYPES.markdown,
  'text/x-markdown': MIME_TYPES.markdown,
  'text/html': MIME_TYPES.html,
  'application/xhtml+xml': MIME_TYPES.html,
  'application/pdf': MIME_TYPES.pdf,
  'application/x-pdf': MIME_TYPES.pdf,
  [MIME_TYPES.docx]: MIME_TYPES.docx,
};

/** Types that say nothing about the format, so the file name (or the bytes) decide. */
const GENERIC = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown']);

/** `text/html; charset=utf-8` → `text/html` (lower case). */
export function essence(mimeType: string): string {
  return mimeType.split(';', 1)[0]!.trim().toLowerCase();
}

/** The charset parameter of a Content-Type, if any. */
export function charsetOf(mimeType: string | undefined): string | undefined {
  return mimeType?.match(/;\s*charset\s*=\s*"?([^";\s]+)/i)?.[1];
}

export function mimeFromName(name: string | undefined): SupportedMimeType | undefined {
  return name ? BY_EXTENSION[extname(name).toLowerCase()] : undefined;
}

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

function looksLikePdf(bytes: Uint8Array): boolean {
  return PDF_MAGIC.every((b, i) => bytes[i] === b);
}

/**
 * Decide the format: a declared type wins unless it is generic (`application/octet-stream`) or plain text
 * while the name says markdown; then the name's extension; then the PDF signature. Undefined when
 * unsupported.
 */
export function detectMimeType(
  declared: string | undefined,
  name: string | undefined,
  bytes: Uint8Array,
): SupportedMimeType | undefined {
  const fromName = mimeFromName(name);
  if (declared && !GENERIC.has(essence(declared))) {
    const known = ALIASES[essence(declared)];
    if (known === MIME_TYPES.text && fromName === MIME_TYPES.markdown) return fromName;
    return known;
  }
  return fromName ?? (looksLikePdf(bytes) ? MIME_TYPES.pdf : undefined);
}
