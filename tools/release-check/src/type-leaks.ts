import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { PublishablePackage } from './packages.js';

/** `zod/v4` → `zod`, `@scope/name/sub` → `@scope/name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** The `.d.ts` files a package's published `types` entry points reach, through their relative imports. */
export function publishedDeclarations(root: string, { directory, json }: PublishablePackage): string[] {
  const exports = (json.publishConfig?.exports ?? {}) as Record<string, { types?: string } | string>;
  const todo = Object.values(exports)
    .map((target) => (typeof target === 'object' ? target.types : undefined))
    .filter((types): types is string => types !== undefined)
    .map((types) => join(root, directory, types));
  const seen = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(
      /(?:from|import\()\s*['"](\.[^'"]+)['"]/g,
    )) {
      todo.push(normalize(join(dirname(file), (specifier as string).replace(/\.js$/, '.d.ts'))));
    }
  }
  return [...seen];
}

/**
 * Packages whose types the published declarations import but the package does not declare (neither a
 * dependency nor a peer): an app gets them only by hoisting luck, at a version nobody chose.
 */
export function undeclaredTypeImports(root: string, pkg: PublishablePackage): string[] {
  const declared = new Set([
    ...Object.keys(pkg.json.dependencies ?? {}),
    ...Object.keys(pkg.json.peerDependencies ?? {}),
  ]);
  const undeclared = new Set<string>();
  for (const file of publishedDeclarations(root, pkg)) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(
      /(?:from|import\()\s*['"]([^'".][^'"]*)['"]/g,
    )) {
      const name = packageOf(specifier as string);
      if (!name.startsWith('node:') && !declared.has(name)) undeclared.add(name);
    }
  }
  return [...undeclared].sort();
}
