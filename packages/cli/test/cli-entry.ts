import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How the tests start `kioku` as a process. The built `dist/cli.js` when the CLI and every workspace package
 * it loads were built after their source last changed (`pnpm test` builds first: see the `test` target's
 * `dependsOn` in package.json) — plain Node starts it about three times faster than the TypeScript loader, and
 * it is what users run. Otherwise (source edited since the last build) the source through tsx, so a test never
 * runs stale code.
 */

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The newest modification time of a file under `dir` (0 when there is none). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The CLI's package and the workspace packages it depends on, transitively (their directories). */
function workspacePackages(dir: string, found = new Set<string>()): Set<string> {
  if (found.has(dir)) return found;
  found.add(dir);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  for (const [name, version] of Object.entries({ ...manifest.peerDependencies, ...manifest.dependencies })) {
    if (!version.startsWith('workspace:')) continue;
    workspacePackages(realpathSync(path.join(dir, 'node_modules', name)), found);
  }
  return found;
}

/** Whether each package's `dist/index.js` is newer than everything in its `src`. */
function builtAfterSource(): boolean {
  for (const dir of workspacePackages(packageDir)) {
    let built: number;
    try {
      built = statSync(path.join(dir, 'dist', 'index.js')).mtimeMs;
    } catch {
      return false;
    }
    if (newestMtime(path.join(dir, 'src')) > built) return false;
  }
  return true;
}

let useDist: boolean | undefined;

/** Which `kioku` the tests start, for the run's log. */
export function describeCliEntry(): string {
  useDist ??= builtAfterSource();
  return useDist
    ? 'the built dist/cli.js'
    : 'the source through tsx (source changed since the last build; `pnpm build` makes these tests faster)';
}

/**
 * The node arguments that run `kioku <args>`. `loadsTypeScript` adds the TypeScript loader for a CLI that
 * imports a `.ts` module of a test (an adapter named by KIOKU_ADAPTERS).
 */
export function kiokuArgv(args: string[], options: { loadsTypeScript?: boolean } = {}): string[] {
  useDist ??= builtAfterSource();
  if (!useDist) {
    return ['--conditions=@kioku/source', '--import', 'tsx', path.join(packageDir, 'src', 'cli.ts'), ...args];
  }
  const loader = options.loadsTypeScript ? ['--import', 'tsx'] : [];
  return [...loader, path.join(packageDir, 'dist', 'cli.js'), ...args];
}
