import { ValidationError } from '@kioku/core';
import { decodeText, looksBinary } from '../normalize.js';
import type { Extracted } from './types.js';

const FIRST_H1 = /^#[ \t]+(.+?)[ \t#]*$/m;

/** Plain text and Markdown are kept as written (models read Markdown well); its `# H1` is the title. */
export function extractPlain(
  bytes: Uint8Array,
  options: { markdown: boolean; charset?: string | undefined },
): Extracted {
  if (looksBinary(bytes)) throw new ValidationError('The file is binary, not text.');
  const text = decodeText(bytes, options.charset);
  const title = options.markdown ? text.match(FIRST_H1)?.[1]?.trim() : undefined;
  return title ? { text, title } : { text };
}
