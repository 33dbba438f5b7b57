import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractText } from '../src/index.js';
import { MIME_TYPES } from '../src/mime.js';
import { ARTICLE_HTML, makeDocx, makePdf } from './fixtures.js';

let dir: string;
const file = async (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kioku-extract-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('extractText: files', () => {
  it('reads a .txt file as written, normalizing line ends and blank runs', async () => {
    const path = await file(
      'notes.txt',
      'First line\r\nsecond line   \r\n\r\n\r\n\r\nThird\u0007 paragraph\f\n',
    );
    const result = await extractText(path);
    expect(result).toEqual({
      text: 'First line\nsecond line\n\nThird paragraph',
      mimeType: MIME_TYPES.text,
      source: { type: 'file', uri: path, mimeType: MIME_TYPES.text },
    });
  });

  it('keeps Markdown and takes its first # heading as the title', async () => {
    const path = await file('guide.md', 'Intro line\n\n# Style Guide\n\n## Naming\n\nUse `snake_case`.\n');
    const result = await extractText(path);
    expect(result.title).toBe('Style Guide');
    expect(result.text).toBe('Intro line\n\n# Style Guide\n\n## Naming\n\nUse `snake_case`.');
    expect(result.mimeType).toBe(MIME_TYPES.markdown);
  });

  it('extracts every page of a PDF and its title', async () => {
    const pdf = await makePdf(
      [['Use virtual environments.', 'Pin your dependencies.'], ['Page two: testing with pytest.']],
      'Python Best Practices',
    );
    const path = await file('python.pdf', pdf);
    const result = await extractText(path);
    expect(result.title).toBe('Python Best Practices');
    expect(result.mimeType).toBe(MIME_TYPES.pdf);
    expect(result.text).toBe(
      'Use virtual environments.\nPin your dependencies.\n\nPage two: testing with pytest.',
    );
    // The caller's buffer is left usable (pdf.js gets a copy).
    const again = await extractText({ data: pdf, name: 'copy.pdf' });
    expect(again.text).toBe(result.text);
  });

  it('extracts the paragraphs of a DOCX', async () => {
    const path = await file('handbook.docx', await makeDocx('Handbook', ['Be kind.', 'Ship small changes.']));
    const result = await extractText(path);
    expect(result.text).toBe('Handbook\n\nBe kind.\n\nShip small changes.');
    expect(result.title).toBeUndefined();
    expect(result.mimeType).toBe(MIME_TYPES.docx);
  });

  it('reads HTML as readable text: main content, no navigation, scripts or link targets', async () => {
    const result = await extractText({ data: new TextEncoder().encode(ARTICLE_HTML), name: 'page.html' });
    expect(result.title).toBe('Python Packaging Guide');
    expect(result.text).toContain('Packaging');
    expect(result.text).toContain('Use virtual environments for every project.');
    expect(result.text).toMatch(/\* pyproject\.toml\n \* lock files/);
    for (const noise of [
      'Home',
      'Site banner',
      'Copyright',
      'tracking',
      'color: red',
      'example.org',
      'x.png',
    ])
      expect(result.text).not.toContain(noise);
  });

  it('reads pages without <main>: the body less its own header and footer, keeping an article header', async () => {
    const html = `<html><body><header>Site banner</header><nav>Menu</nav>
      <div><article><header><h1>Release notes</h1></header><p>Version 2 is out.</p></article>
      <h1>Second heading</h1></div><footer>Copyright</footer></body></html>`;
    const result = await extractText({ data: new TextEncoder().encode(html), mimeType: 'text/html' });
    expect(result.title).toBe('Release notes');
    expect(result.text).toBe('Release notes\n\nVersion 2 is out.');
  });

  it('accepts file: URLs and { path, mimeType }', async () => {
    const txt = await file('words.txt', 'plain words');
    expect((await extractText(pathToFileURL(txt))).text).toBe('plain words');
    expect((await extractText(pathToFileURL(txt).href)).source.uri).toBe(txt);
    // No extension: only the declared type says what it is.
    const path = await file('README', 'plain words');
    await expect(extractText(path)).rejects.toMatchObject({ code: 'VALIDATION' });
    const typed = await extractText({ path, mimeType: 'text/plain' });
    expect(typed.source).toEqual({ type: 'file', uri: path, mimeType: MIME_TYPES.text });
  });
});

describe('extractText: bytes in memory', () => {
  it('uses the MIME type when there is no name, and leaves uri out', async () => {
    const result = await extractText({
      data: new TextEncoder().encode('# Title\nbody'),
      mimeType: 'text/markdown',
    });
    expect(result.title).toBe('Title');
    expect(result.source).toEqual({ type: 'file', mimeType: MIME_TYPES.markdown });
  });

  it('recognises a PDF by its signature when nothing else says what it is', async () => {
    const pdf = await makePdf([['Signature sniffing works.']]);
    const result = await extractText({ data: pdf, mimeType: 'application/octet-stream' });
    expect(result.mimeType).toBe(MIME_TYPES.pdf);
    expect(result.text).toBe('Signature sniffing works.');
  });

  it('decodes UTF-16 text with a byte-order mark', async () => {
    const body = Buffer.from('\uFEFFhéllo wörld', 'utf16le');
    expect((await extractText({ data: body, name: 'x.txt' })).text).toBe('héllo wörld');
  });
});

describe('extractText: errors', () => {
  it('rejects unsupported types with a ValidationError', async () => {
    const path = await file('sheet.xlsx', 'PK\u0003\u0004');
    await expect(extractText(path)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('Unsupported document type'),
    });
    await expect(extractText({ data: new Uint8Array([1, 2, 3]) })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    await expect(extractText({ data: new Uint8Array([1]), mimeType: 'image/png' })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('image/png'),
    });
  });

  it('rejects documents without text', async () => {
    const path = await file('empty.md', ' \n\n\t\n');
    await expect(extractText(path)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('No text found'),
    });
    const blankPdf = await makePdf([[]]);
    await expect(extractText({ data: blankPdf, name: 'scan.pdf' })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('OCR'),
    });
  });

  it('rejects damaged PDFs and DOCX files and binary text files', async () => {
    await expect(
      extractText({ data: new TextEncoder().encode('%PDF-1.7 garbage'), name: 'bad.pdf' }),
    ).rejects.toMatchObject({ code: 'VALIDATION', message: expect.stringContaining('PDF') });
    await expect(
      extractText({ data: new TextEncoder().encode('not a zip'), name: 'bad.docx' }),
    ).rejects.toMatchObject({ code: 'VALIDATION', message: expect.stringContaining('DOCX') });
    await expect(extractText({ data: new Uint8Array([104, 0, 105]), name: 'x.txt' })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('binary'),
    });
  });

  it('turns a missing file into a StorageError carrying the cause', async () => {
    const error = await extractText(join(dir, 'missing.txt')).catch((e) => e);
    expect(error).toMatchObject({ code: 'STORAGE', details: { errno: 'ENOENT' } });
    expect((error as Error).cause).toMatchObject({ code: 'ENOENT' });
  });

  it('refuses input over maxBytes before reading it', async () => {
    const path = await file('big.txt', 'x'.repeat(2048));
    await expect(extractText(path, { maxBytes: 1024 })).rejects.toMatchObject({
      code: 'VALIDATION',
      details: { maxBytes: 1024 },
    });
    await expect(
      extractText({ data: new Uint8Array(2048).fill(65), name: 'a.txt' }, { maxBytes: 1024 }),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('refuses schemes other than http and https', async () => {
    for (const source of [
      'ftp://example.com/a.txt',
      'data:text/plain,hello',
      new URL('javascript:alert(1)'),
    ]) {
      await expect(extractText(source)).rejects.toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('Only http and https'),
      });
    }
  });
});
