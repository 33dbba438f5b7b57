import { convert, type HtmlToTextOptions } from 'html-to-text';
import { decodeText } from '../normalize.js';
import type { Extracted } from './types.js';

// Page furniture that is not content. The page's own header and footer go, an article's header stays.
const SKIPPED = [
  'nav',
  'aside',
  'form',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'img',
  'iframe',
  'body > header',
  'body > footer',
];
const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/** The element that holds the page's content: `<main>`, else `<article>`, else `<body>`. */
function baseSelector(html: string): string {
  if (/<main[\s>]/i.test(html)) return 'main';
  if (/<article[\s>]/i.test(html)) return 'article';
  return 'body';
}

function textOptions(base: string): HtmlToTextOptions {
  return {
    wordwrap: false,
    baseElements: { selectors: [base], returnDomByDefault: true },
    selectors: [
      ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
      { selector: 'a', options: { ignoreHref: true } },
      ...HEADINGS.map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  };
}

/**
 * Readable text of an HTML page: the `<main>` (or `<article>`, or `<body>`) content without navigation,
 * the page's header and footer, asides, forms, scripts and images; links keep their text, not their
 * address. The title is `<title>`, else the first `<h1>`.
 */
export function extractHtml(bytes: Uint8Array, charset?: string): Extracted {
  const html = decodeText(bytes, charset);
  const text = convert(html, textOptions(baseSelector(html)));
  const title = headingText(html, 'title') || headingText(html, 'h1') || undefined;
  return title ? { text, title } : { text };
}

function headingText(html: string, selector: string): string {
  return convert(html, {
    wordwrap: false,
    baseElements: { selectors: [selector], returnDomByDefault: false },
    limits: { maxBaseElements: 1 },
    selectors: [{ selector, format: 'inline' }],
  })
    .replace(/\s+/g, ' ')
    .trim();
}
