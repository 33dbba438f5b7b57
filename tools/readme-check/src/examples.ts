import { readFileSync } from 'node:fs';
import path from 'node:path';

/** One TypeScript block of a README, as a module to compile. */
export interface ReadmeExample {
  /** The README it comes from, relative to the repository root. */
  readme: string;
  /** 1-based line of the block's first code line in the README. */
  line: number;
  code: string;
  /** Where the block is compiled as if it were a file (absolute): decides how its imports resolve. */
  file: string;
}

/**
 * `<!-- readme-check: packages/store-sqlite/test/conformance.test.ts -->` on the line before a block: compile
 * it as that file (relative to the repository root), for examples whose relative imports mean something
 * only there.
 */
const LOCATION = /<!--\s*readme-check:\s*(\S+)\s*-->\s*$/;

/** A standalone program starts with an import: fragments (a call, an option object) are not checked. */
function isStandalone(code: string): boolean {
  return /^import\s/.test(code.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('//')) ?? '');
}

/**
 * The standalone ```ts blocks of one README. Blocks that do not start with an import are fragments
 * and are left out.
 */
export function readmeExamples(root: string, readme: string, defaultDir: string): ReadmeExample[] {
  const lines = readFileSync(path.join(root, readme), 'utf8').split('\n');
  const examples: ReadmeExample[] = [];
  const slug = readme.replaceAll(/[^A-Za-z0-9]+/g, '-').replace(/-md$/, '');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const code = lines.slice(start, end).join('\n');
    const location = lines[i - 1]?.match(LOCATION)?.[1];
    if (isStandalone(code)) {
      const file = location
        ? path.join(root, location)
        : path.join(defaultDir, `${slug}.${examples.length + 1}.ts`);
      examples.push({ readme, line: start + 1, code, file });
    }
    i = end;
  }
  return examples;
}
