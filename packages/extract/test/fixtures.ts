import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A PDF with one line of text per page (and an information-dictionary title when given). */
export async function makePdf(pages: string[][], title?: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (title) doc.setTitle(title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage();
    lines.forEach((line, i) => {
      page.drawText(line, { x: 50, y: 700 - i * 20, size: 12, font });
    });
  }
  return doc.save();
}

/** A Word document with a heading and paragraphs. */
export async function makeDocx(heading: string, paragraphs: string[]): Promise<Uint8Array> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
          ...paragraphs.map((p) => new Paragraph(p)),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

export const ARTICLE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Python Packaging Guide</title>
<style>body { color: red }</style><script>window.tracking = 1;</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<header>Site banner</header>
<main>
<h1>Packaging</h1>
<p>Use <a href="https://example.org/venv">virtual environments</a> for every project.</p>
<ul><li>pyproject.toml</li><li>lock files</li></ul>
<img src="x.png" alt="diagram">
</main>
<footer>Copyright 2025</footer>
</body></html>`;
