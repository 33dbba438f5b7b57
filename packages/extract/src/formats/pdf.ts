import { ValidationError } from '@kioku/core';
import type { Extracted } from './types.js';

/**
 * Text of every page (pages separated by a blank line) with unpdf, a dependency-free build of Mozilla's
 * pdf.js; the title from the document information. Loaded on first use so other formats do not pay for it.
 */
export async function extractPdf(bytes: Uint8Array): Promise<Extracted> {
  const { getDocumentProxy, extractText, getMeta } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may take ownership of (detach) the buffer it gets: hand it a copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    const name = (error as { name?: string })?.name;
    const reason =
      name === 'PasswordException' ? 'it is password-protected' : 'it is not a readable PDF file';
    throw new ValidationError(`Cannot extract text from the PDF: ${reason}.`, { cause: error });
  }
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const { info } = await getMeta(pdf);
    const rawTitle = (info as Record<string, unknown> | undefined)?.Title;
    const title = typeof rawTitle === 'string' ? rawTitle.trim() : '';
    const joined = text.join('\n\n');
    return title ? { text: joined, title } : { text: joined };
  } catch (error) {
    throw new ValidationError('Cannot extract text from the PDF: it is damaged.', { cause: error });
  } finally {
    await pdf.destroy();
  }
}
