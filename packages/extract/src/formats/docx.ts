import { ValidationError } from '@kioku/core';
import type { Extracted } from './types.js';

/** Paragraph text of a Word document with mammoth (paragraphs separated by blank lines). No title. */
export async function extractDocx(bytes: Uint8Array): Promise<Extracted> {
  const { default: mammoth } = await import('mammoth');
  try {
    const result = await mammoth.extractRawText({
      buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    });
    return { text: result.value };
  } catch (error) {
    throw new ValidationError('Cannot extract text from the DOCX: it is not a readable Word document.', {
      cause: error,
    });
  }
}
