import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PublishablePackage } from './packages.js';

/** Every entry point a published package exports (`@kioku/core`, `@kioku/core/store`, …). */
export function entryPoints(packages: readonly PublishablePackage[]): string[] {
  return packages.flatMap(({ json }) => {
    const exports = (json.publishConfig?.exports ?? json.exports ?? {}) as Record<string, unknown>;
    return Object.keys(exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? json.name : `${json.name}${key.slice(1)}`));
  });
}

/**
 * The example the app runs (the same text as an ES module and as CommonJS, where TS emits `require`): it
 * imports every public entry point (so each one's types are checked and each one loads), then works a
 * SQLite store with vectors on and a JSON store, and builds the OpenAI adapter.
 */
function example(entries: readonly string[]): string {
  const imports = entries.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
  const table = entries.map((entry, i) => `  ['${entry}', entry${i}],`).join('\n');
  return `${imports}
import { HashingEmbedder, KiokuBuilder } from '@kioku/core';
import { OpenAIChatModel } from '@kioku/openai';
import { createJsonStores } from '@kioku/store-json';
import { createSqliteStores } from '@kioku/store-sqlite';

const ENTRIES: Array<[string, object]> = [
${table}
];

async function main(directory: string, format: string): Promise<void> {
  const empty = ENTRIES.filter(([, namespace]) => Object.keys(namespace).length === 0).map(([name]) => name);
  if (empty.length > 0) throw new Error('install-check example (' + format + '): nothing exported by ' + empty.join(', '));
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
  console.log('install-check example (' + format + '): ' + ENTRIES.length + ' entry points loaded, ok', found);
}
`;
}

/**
 * Entry points whose library's own declarations fail `skipLibCheck: false` whoever imports them: they are
 * typechecked and run apart, with `skipLibCheck: true` (what an app using that library needs anyway).
 * - `@kioku/mastra`, whose classes extend Mastra's: @mastra/core 1.x's declarations carry copies of the
 *   AI SDK v4 types written against zod 3 (zod 4 is installed) and relative imports without extensions
 *   (TS2834 under NodeNext): ~870 errors, all inside @mastra/*. Checking them also costs more than
 *   everything else together.
 */
export const LIB_CHECK_EXEMPT = ['@kioku/mastra'];

/** One tsconfig per resolution (`<name>.json`): the example with skipLibCheck false, the exempt entries apart. */
export const TSCONFIGS = ['nodenext', 'bundler', 'exempt-nodenext', 'exempt-bundler'];

function tsconfig(name: string): object {
  const nodenext = name.endsWith('nodenext');
  const exempt = name.startsWith('exempt');
  return {
    compilerOptions: {
      module: nodenext ? 'NodeNext' : 'ESNext',
      moduleResolution: nodenext ? 'NodeNext' : 'Bundler',
      target: 'ES2022',
      strict: true,
      skipLibCheck: exempt,
      types: ['node'],
      outDir: nodenext ? 'dist' : undefined,
      noEmit: !nodenext,
    },
    files: exempt ? ['src/exempt.mts', 'src/exempt.cts'] : ['src/example.mts', 'src/example.cts'],
  };
}

/** The exempt entry points, imported and checked to export something (same text as ESM and CJS). */
function exemptExample(format: string): string {
  const imports = LIB_CHECK_EXEMPT.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
  const checks = LIB_CHECK_EXEMPT.map(
    (entry, i) =>
      `if (Object.keys(entry${i}).length === 0) throw new Error('install-check (${format}): nothing exported by ${entry}');`,
  ).join('\n');
  return `${imports}\n${checks}\nconsole.log('install-check (${format}): ${LIB_CHECK_EXEMPT.join(', ')} loaded, ok');\nexport {};\n`;
}

/** An npm project depending on every tarball (and the drivers the example opens), with the example. */
export function writeApp(
  app: string,
  tarballs: readonly string[],
  packages: readonly PublishablePackage[],
  sqliteVersion: string,
): void {
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
        dependencies: { ...dependencies, 'better-sqlite3': sqliteVersion },
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
  const entries = entryPoints(packages);
  const source = example(entries.filter((entry) => !LIB_CHECK_EXEMPT.includes(entry)));
  // The same program as ESM (.mts: import) and CJS (.cts: require; Node ≥ 20.19 requires ES modules).
  const call = (format: string) =>
    `main(process.argv[2] ?? '.', '${format}').catch((error: unknown) => {\n  console.error(error);\n  process.exit(1);\n});\n`;
  writeFileSync(join(app, 'src/example.mts'), `${source}${call('ESM')}`);
  writeFileSync(join(app, 'src/example.cts'), `${source}${call('CJS')}`);
  writeFileSync(join(app, 'src/exempt.mts'), exemptExample('ESM'));
  writeFileSync(join(app, 'src/exempt.cts'), exemptExample('CJS'));
  for (const name of TSCONFIGS) {
    writeFileSync(join(app, `${name}.json`), JSON.stringify(tsconfig(name), null, 2));
  }
}
