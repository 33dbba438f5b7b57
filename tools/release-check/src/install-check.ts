import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LIB_CHECK_EXEMPT, TSCONFIGS, writeApp } from './install-app.js';
import { publishablePackages } from './packages.js';
import { prebuiltSqlite } from './prebuilt-sqlite.js';
import { run, timed, timings } from './run-command.js';
import { undeclaredTypeImports } from './type-leaks.js';

/**
 * What a team outside the workspace gets: every public package packed (`pnpm pack` rewrites `workspace:`
 * ranges and applies `publishConfig`), the tarballs installed with plain `npm install` (no flags that
 * change resolution, so a peer range that excludes the packed versions fails with ERESOLVE) into an empty
 * npm project, an example importing every public entry point typechecked with `skipLibCheck: false` under
 * NodeNext and Bundler resolution, then run as ESM and as CJS. Needs the packages built
 * (`nx run @kioku/release-check:install-check` builds them first) and the npm registry (or its cache).
 */

/** Runs tsc on one of the app's tsconfigs (any error fails the check). */
function typecheck(app: string, config: string): Promise<string> {
  const tsc = join(app, 'node_modules/typescript/bin/tsc');
  return run(process.execPath, [tsc, '-p', `${config}.json`, '--pretty', 'false'], app);
}

export async function installCheck(root: string): Promise<void> {
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'kioku-install-check-'));
  try {
    const packages = publishablePackages(root);
    const leaks = packages.flatMap((pkg) =>
      undeclaredTypeImports(root, pkg).map(
        (name) =>
          `${pkg.json.name}: its published types import ${name}, which it does not declare (a dependency, or a peer for a driver)`,
      ),
    );
    if (leaks.length > 0) throw new Error(`install-check:\n${leaks.join('\n')}`);
    const packed = join(work, 'tarballs');
    mkdirSync(packed);
    // One pnpm for every package (a pnpm per package costs seconds each on a busy machine), and the
    // better-sqlite3 binary offered to the install prepared meanwhile.
    const [, prebuilt] = await Promise.all([
      timed('pack', () =>
        run('pnpm', ['--recursive', '--filter', './packages/*', 'pack', '--pack-destination', packed], root),
      ),
      timed('prebuilt better-sqlite3', () => prebuiltSqlite(root, work)),
    ]);
    const made = new Set(readdirSync(packed));
    const tarballs = packages.map(({ json, directory }) => {
      const file = `${json.name.replace(/^@/, '').replace('/', '-')}-${json.version}.tgz`;
      if (!made.has(file)) throw new Error(`install-check: pnpm pack made no ${file} for ${directory}`);
      return join(packed, file);
    });
    const app = join(work, 'app');
    mkdirSync(app);
    writeApp(app, tarballs, packages, prebuilt?.version ?? '^12.0.0');
    if (!prebuilt)
      process.stdout.write(
        "install-check: the workspace's better-sqlite3 does not load here; npm compiles it\n",
      );
    // --prefer-offline: the npm cache answers for what it holds (same resolution, no revalidation round trips).
    await timed('npm install', () =>
      run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], app, {
        ...process.env,
        ...prebuilt?.env,
      }),
    );
    const data = join(work, 'data');
    mkdirSync(join(data, 'esm'), { recursive: true });
    mkdirSync(join(data, 'cjs'), { recursive: true });
    // The four programs side by side; each node run as soon as the program that emits it is done.
    const checks = TSCONFIGS.map((config) => timed(`tsc ${config}`, () => typecheck(app, config)));
    const [nodenext, , exemptNodenext] = checks;
    const example = (file: string, format: string) =>
      timed(`run ${file}`, () => run('node', [`dist/${file}`, join(data, format)], app));
    const runs = [
      nodenext!.then(() => example('example.mjs', 'esm')),
      nodenext!.then(() => example('example.cjs', 'cjs')),
      exemptNodenext!.then(() => example('exempt.mjs', 'esm')),
      exemptNodenext!.then(() => example('exempt.cjs', 'cjs')),
    ];
    const results = await Promise.allSettled([...checks, ...runs]);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
    for (const result of results.slice(checks.length)) {
      if (result.status === 'fulfilled') process.stdout.write(result.value);
    }
    process.stdout.write(
      `install-check: ${packages.length} packages packed, installed with npm, typechecked (NodeNext, Bundler; skipLibCheck false but for ${LIB_CHECK_EXEMPT.join(', ')}), run as ESM and CJS in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    process.stdout.write(
      `${timings.map(({ phase, seconds }) => `  ${phase.padEnd(24)} ${seconds.toFixed(1).padStart(6)} s`).join('\n')}\n`,
    );
    if (process.env.KIOKU_KEEP_INSTALL_CHECK) process.stdout.write(`kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]).endsWith('install-check.ts')) {
  installCheck(resolve(import.meta.dirname, '../../..')).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
