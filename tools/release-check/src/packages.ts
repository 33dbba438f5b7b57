import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The peer range every published package gives `@kioku/*`: admits each 0.x minor (see the root README). */
export const KIOKU_PEER_RANGE = 'workspace:>=0.1.0 <1.0.0';
/** The export condition that points tests at TypeScript source; it must not reach a published package.json. */
const SOURCE_CONDITION = '@kioku/source';

interface PackageJson {
  name: string;
  private?: boolean;
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
  for (const [name, range] of Object.entries(json.peerDependencies ?? {})) {
    if (name.startsWith('@kioku/') && range !== KIOKU_PEER_RANGE) {
      say(`peer ${name} is "${range}"; use "${KIOKU_PEER_RANGE}" so a core 0.x minor stays in range`);
    }
  }
  return problems;
}
