import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The peer range every published package gives `@kioku/*`: admits each 0.x minor (see the root README). */
export const KIOKU_PEER_RANGE = 'workspace:>=0.0.0 <1.0.0';
/** The export condition that points tests at TypeScript source; it must not reach a published package.json. */
const SOURCE_CONDITION = '@kioku/source';

/**
 * The drivers and SDKs an application brings (and picks the version of): a published package names them
 * as peers, never as dependencies, so an app never ends up with two copies.
 */
export const DRIVERS = [
  'pg',
  'postgres',
  'better-sqlite3',
  'ioredis',
  'redis',
  '@qdrant/js-client-rest',
  'drizzle-orm',
  'openai',
  'ai',
  '@openai/agents',
  'vitest',
];
/** Tools that only build or test a package: never in `dependencies` (nor is any `@types/*`). */
const DEV_ONLY = ['typescript', 'tsx', 'vitest', 'drizzle-kit', '@biomejs/biome', 'publint', 'nx'];
/** Source maps are not shipped (their sources are not in the tarball): `files` excludes them. */
export const NO_MAPS = '!dist/**/*.map';

export interface PackageJson {
  name: string;
  version?: string;
  private?: boolean;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  files?: string[];
  exports?: unknown;
  publishConfig?: { exports?: unknown };
  peerDependencies?: Record<string, string>;
}

export interface PublishablePackage {
  directory: string;
  json: PackageJson;
}

/** The packages under `packages/` that are published (not private). */
export function publishablePackages(root: string): PublishablePackage[] {
  return readdirSync(join(root, 'packages'))
    .map((name) => join('packages', name))
    .filter((directory) => existsSync(join(root, directory, 'package.json')))
    .map((directory) => ({
      directory,
      json: JSON.parse(readFileSync(join(root, directory, 'package.json'), 'utf8')) as PackageJson,
    }))
    .filter((pkg) => !pkg.json.private);
}

function withoutSourceCondition(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([condition]) => condition !== SOURCE_CONDITION)
      .map(([key, value]) => [key, withoutSourceCondition(value)]),
  );
}

function targets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (typeof exports !== 'object' || exports === null) return [];
  return Object.values(exports).flatMap(targets);
}

/** What a publishable package lacks to be published as the root README promises. */
export function packageProblems(root: string, pkg: PublishablePackage): string[] {
  const { json, directory } = pkg;
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${json.name} (${directory}): ${what}`);
  const license = join(root, directory, 'LICENSE');
  if (json.license !== 'MIT') say('license must be "MIT"');
  if (!existsSync(license)) say('has no LICENSE file (copy the root LICENSE)');
  else if (readFileSync(license, 'utf8') !== readFileSync(join(root, 'LICENSE'), 'utf8')) {
    say('LICENSE differs from the root LICENSE');
  }
  if (json.repository?.directory !== directory || !json.repository.url) {
    say(`repository must name the git url and "directory": "${directory}"`);
  }
  if (!json.homepage) say('homepage is missing');
  if (!json.bugs?.url) say('bugs.url is missing');
  const published = json.publishConfig?.exports;
  if (JSON.stringify(published) !== JSON.stringify(withoutSourceCondition(json.exports))) {
    say(`publishConfig.exports must equal exports without the "${SOURCE_CONDITION}" condition`);
  }
  const shipped = (target: string) =>
    target === './package.json' || (json.files ?? []).some((f) => target.startsWith(`./${f}/`));
  for (const target of targets(published)) {
    if (!shipped(target)) say(`published export ${target} is not in "files", so the tarball lacks it`);
  }
  for (const name of Object.keys(json.dependencies ?? {})) {
    if (DRIVERS.includes(name)) {
      say(`${name} is in "dependencies": a driver the app brings is a peerDependency (and a devDependency)`);
    } else if (name.startsWith('@types/') || DEV_ONLY.includes(name)) {
      say(
        `${name} is in "dependencies" but only builds or tests the package: move it to devDependencies (types the published .d.ts need: an optional peer)`,
      );
    }
  }
  const rootEngines = (readJson(join(root, 'package.json')) as PackageJson).engines?.node;
  if (json.engines?.node !== rootEngines) {
    say(
      `engines.node is "${json.engines?.node}"; use "${rootEngines}", the range CI tests (root package.json)`,
    );
  }
  if ((json.files ?? []).includes('src')) say('"files" ships src: source maps are not shipped, nor is src');
  if ((json.files ?? []).at(-1) !== NO_MAPS) {
    say(
      `"files" must end with "${NO_MAPS}": a map left by an older build would point at sources not shipped`,
    );
  }
  const emits = emittedMaps(join(root, directory, 'tsconfig.build.json'));
  if (emits.length > 0)
    say(`tsconfig.build.json emits ${emits.join(' and ')}: set them false (maps are not shipped)`);
  for (const [name, range] of Object.entries(json.peerDependencies ?? {})) {
    if (name.startsWith('@kioku/') && range !== KIOKU_PEER_RANGE) {
      say(`peer ${name} is "${range}"; use "${KIOKU_PEER_RANGE}" so a core 0.x minor stays in range`);
    }
  }
  return problems;
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

interface TsConfig {
  extends?: string;
  compilerOptions?: { sourceMap?: boolean; declarationMap?: boolean };
}

/** The map options (`sourceMap`, `declarationMap`) a tsconfig turns on, following its `extends` chain. */
export function emittedMaps(tsconfig: string): string[] {
  if (!existsSync(tsconfig)) return [];
  const options: Record<string, boolean | undefined> = {};
  const chain: TsConfig[] = [];
  for (let file: string | undefined = tsconfig; file; ) {
    const config = readJson(file) as TsConfig;
    chain.unshift(config);
    file = config.extends ? join(dirname(file), config.extends) : undefined;
  }
  for (const config of chain) Object.assign(options, config.compilerOptions);
  return ['sourceMap', 'declarationMap'].filter((option) => options[option] === true);
}
