import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Need, parseNeeds } from './needs.js';
import { parseReplies, type ScriptedReply } from './replies.js';

/** One TypeScript block of a README, as a module to compile and a program to run. */
export interface ReadmeExample {
  /** The README it comes from, relative to the repository root. */
  readme: string;
  /** 1-based line of the block's first code line in the README. */
  line: number;
  code: string;
  /** Where the block is compiled as if it were a file (absolute; never written). */
  file: string;
  /** The servers its `// Needs:` line names; none for an example that runs on its own. */
  needs: Need[];
  /**
   * `test/conformance.test.ts` when the block's first line is `// test/conformance.test.ts`: a vitest test
   * file, run with `vitest run` from a directory where it has that path.
   */
  testFile?: string;
  /** What the scripted model answers, in order, from a `<!-- readme-check model: […] -->` line. */
  replies: ScriptedReply[];
  /** Packages it imports that no `pnpm add` / `npm install` line above it names: a newcomer would lack them. */
  uninstalled: string[];
}

/** `<!-- readme-check model: ["Noted."] -->` on a line before a block: the scripted model's replies. */
const MODEL = /^<!--\s*readme-check model:\s*(.*?)\s*-->\s*$/;
/** `// test/conformance.test.ts` as a block's first line. */
const TEST_FILE = /^\/\/\s*(\S+\.test\.ts)\s*$/;

/** The root README and every package's, app's and tool's, relative to the repository root. */
export function repositoryReadmes(root: string): string[] {
  const found = ['README.md'];
  for (const group of ['packages', 'apps', 'tools']) {
    for (const entry of readdirSync(path.join(root, group), { withFileTypes: true })) {
      const readme = path.join(group, entry.name, 'README.md');
      if (entry.isDirectory() && existsSync(path.join(root, readme))) found.push(readme);
    }
  }
  return found;
}

const INSTALL = /\b(?:pnpm add|npm install|npm i)\s+(.*)$/;

/** The package an import specifier or an install argument names: `@kioku/core/testing` → `@kioku/core`. */
function packageName(spec: string): string {
  const [first, second] = spec.split('/');
  const name = first!.startsWith('@') ? `${first}/${second?.split('@')[0]}` : first!.split('@')[0]!;
  return name.replace(/[^\w@/.-].*$/, '');
}

/** Packages the block imports (not Node's own) that no install line above `fence` names. */
function uninstalled(code: string, lines: string[], fence: number): string[] {
  const installed = new Set(
    lines
      .slice(0, fence)
      .flatMap((l) => l.match(INSTALL)?.[1]?.split(/\s+/) ?? [])
      .filter((arg) => !arg.startsWith('-'))
      .map(packageName),
  );
  const imported = [...code.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return [...new Set(imported.filter((s) => !s.startsWith('node:')).map(packageName))].filter(
    (name) => !installed.has(name),
  );
}

/** A standalone program starts with an import: fragments (a call, an option object) are not checked. */
function isStandalone(code: string): boolean {
  return /^import\s/.test(code.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('//')) ?? '');
}

/**
 * The standalone ```ts blocks of one README, each to be compiled as a file in `dir`. Blocks that do not
 * start with an import are fragments and are left out. A malformed marker (an unknown server, replies that are not JSON) throws, naming
 * the README line.
 */
export function readmeExamples(root: string, readme: string, dir: string): ReadmeExample[] {
  const lines = readFileSync(path.join(root, readme), 'utf8').split('\n');
  const examples: ReadmeExample[] = [];
  const slug = readme.replaceAll(/[^A-Za-z0-9]+/g, '-').replace(/-md$/, '');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const code = lines.slice(start, end).join('\n');
    if (isStandalone(code)) {
      const at = `${readme}:${start + 1}`;
      const model = lines[i - 1]?.match(MODEL)?.[1];
      examples.push({
        readme,
        line: start + 1,
        code,
        file: path.join(dir, `${slug}.${examples.length + 1}.ts`),
        needs: parseNeeds(code, at),
        testFile: code.split('\n')[0]!.match(TEST_FILE)?.[1],
        replies: model === undefined ? [] : parseReplies(model, at),
        uninstalled: uninstalled(code, lines, i),
      });
    }
    i = end;
  }
  return examples;
}
