import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type PublishablePackage, publishablePackages } from './packages.js';
import { undeclaredTypeImports } from './type-leaks.js';

/**
 * What a team outside the workspace gets: every public package packed (`pnpm pack` rewrites `workspace:`
 * ranges and applies `publishConfig`), the tarballs installed with plain `npm install` (no flags, so a peer
 * range that excludes the packed versions fails with ERESOLVE) into an empty npm project, an example
 * typechecked with `skipLibCheck: false` under NodeNext and Bundler resolution, then run as ESM and as CJS.
 * Needs the packages built (`nx run @kioku/release-check:install-check` builds them first) and the npm
 * registry for the third-party dependencies and peers.
 */

/** Runs a command, echoing it; its output is shown only when it fails. */
function run(command: string, args: string[], cwd: string): string {
  process.stdout.write(`$ ${command} ${args.join(' ')}  (${cwd})\n`);
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new Error(
      `install-check: \`${command} ${args.join(' ')}\` failed in ${cwd}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    );
  }
}

/** The example the app runs (the same text as an ES module and as CommonJS, where TS emits `require`): a SQLite store with vectors on, a JSON store, and the OpenAI adapter loaded. */
const EXAMPLE = `import { HashingEmbedder, KiokuBuilder } from '@kioku/core';
import { OpenAIChatModel } from '@kioku/openai';
import { createJsonStores } from '@kioku/store-json';
import { createSqliteStores } from '@kioku/store-sqlite';

async function main(directory: string, format: string): Promise<void> {
  const embedder = new HashingEmbedder({ dimensions: 64 });
  const sqlite = createSqliteStores({ file: directory + '/memory.db', vectors: { dimensions: embedder.dimensions } });
  await sqlite.setup();
  const kioku = new KiokuBuilder({ stores: sqlite, embeddings: embedder }).withFacts({ mode: 'recall' }).build();
  await kioku.stores.facts.create({ userId: 'alice' }, { content: 'We deploy everything with Kubernetes' });
  const hits = await kioku.stores.facts.search({ userId: 'alice' }, { query: 'how do we deploy?' });
  await kioku.close();
  const json = createJsonStores({ directory: directory + '/json' });
  await json.facts.create({ userId: 'bob' }, { content: 'Prefers metric units' });
  const units = await json.facts.search({ userId: 'bob' }, { query: 'units' });
  const model = new OpenAIChatModel({ apiKey: 'not-used', model: 'gpt-4o-mini' });
  const found = [hits[0]?.fact.content, units[0]?.fact.content];
  if (found[0] !== 'We deploy everything with Kubernetes' || found[1] !== 'Prefers metric units' || !model) {
    throw new Error('install-check example (' + format + '): recall returned ' + JSON.stringify(found));
  }
  console.log('install-check example (' + format + '): ok', found);
}
`;

const TSCONFIGS = {
  nodenext: { module: 'NodeNext', moduleResolution: 'NodeNext' },
  bundler: { module: 'ESNext', moduleResolution: 'Bundler' },
};

function writeApp(app: string, tarballs: string[], packages: readonly PublishablePackage[]): void {
  const dependencies = Object.fromEntries(
    packages.map(({ json }, i) => [json.name, `file:${tarballs[i]}`] as const),
  );
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'kioku-install-check',
        private: true,
        type: 'module',
        dependencies: { ...dependencies, 'better-sqlite3': '^12.0.0', 'drizzle-orm': '^0.45.0' },
        devDependencies: {
          typescript: '~5.9.3',
          '@types/node': '^20.19.0',
          '@types/better-sqlite3': '^7.6.13',
        },
      },
      null,
      2,
    ),
  );
  mkdirSync(join(app, 'src'));
  // The same program as ESM (.mts: import) and CJS (.cts: require; Node ≥ 20.19 requires ES modules).
  const call = (format: string) =>
    `main(process.argv[2] ?? '.', '${format}').catch((error: unknown) => {\n  console.error(error);\n  process.exit(1);\n});\n`;
  writeFileSync(join(app, 'src/example.mts'), `${EXAMPLE}${call('ESM')}`);
  writeFileSync(join(app, 'src/example.cts'), `${EXAMPLE}${call('CJS')}`);
  for (const [name, options] of Object.entries(TSCONFIGS)) {
    const compilerOptions = {
      ...options,
      target: 'ES2022',
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      outDir: name === 'nodenext' ? 'dist' : undefined,
      noEmit: name !== 'nodenext',
    };
    writeFileSync(
      join(app, `tsconfig.${name}.json`),
      JSON.stringify({ compilerOptions, include: ['src'] }, null, 2),
    );
  }
}

export function installCheck(root: string): void {
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
    // One pnpm for every package (a pnpm per package costs seconds each on a busy machine).
    run('pnpm', ['--recursive', '--filter', './packages/*', 'pack', '--pack-destination', packed], root);
    const made = new Set(readdirSync(packed));
    const tarballs = packages.map(({ json, directory }) => {
      const file = `${json.name.replace(/^@/, '').replace('/', '-')}-${json.version}.tgz`;
      if (!made.has(file)) throw new Error(`install-check: pnpm pack made no ${file} for ${directory}`);
      return join(packed, file);
    });
    const app = join(work, 'app');
    mkdirSync(app);
    writeApp(app, tarballs, packages);
    run('npm', ['install', '--no-audit', '--no-fund'], app);
    run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.bundler.json'], app);
    run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.nodenext.json'], app);
    const data = join(work, 'data');
    mkdirSync(join(data, 'esm'), { recursive: true });
    mkdirSync(join(data, 'cjs'), { recursive: true });
    process.stdout.write(run('node', ['dist/example.mjs', join(data, 'esm')], app));
    process.stdout.write(run('node', ['dist/example.cjs', join(data, 'cjs')], app));
    process.stdout.write(
      `install-check: ${packages.length} packages packed, installed with npm, typechecked (NodeNext, Bundler; skipLibCheck false), run as ESM and CJS in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    if (process.env.KIOKU_KEEP_INSTALL_CHECK) process.stdout.write(`kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]).endsWith('install-check.ts')) {
  installCheck(resolve(import.meta.dirname, '../../..'));
}
