import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import getReleasePlan from '@changesets/get-release-plan';
import { describe, expect, it } from 'vitest';
import { bumpsPastChangesets, type PlanLike } from '../src/bumps.js';
import { changelogProblems, firstReleaseProblems } from '../src/first-release.js';
import { emittedMaps, packageProblems, publishablePackages } from '../src/packages.js';
import { undeclaredTypeImports } from '../src/type-leaks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the pending release', () => {
  it('bumps no package further than its changesets say', async () => {
    const plan = await getReleasePlan(root);
    expect(bumpsPastChangesets(plan as PlanLike)).toEqual([]);
  });

  it('publishes every unreleased package first as 0.1.0, and nothing as a major', async () => {
    const plan = await getReleasePlan(root);
    expect(firstReleaseProblems(plan as PlanLike, publishablePackages(root))).toEqual([]);
  });

  it('flags a major, an unreleased package left out, and a first release that is not 0.1.0', () => {
    const unreleased = (name: string) => ({
      directory: `packages/${name}`,
      json: { name, version: '0.0.0' },
    });
    const plan: PlanLike = {
      changesets: [
        { id: 'big', releases: [{ name: '@kioku/a', type: 'major' }] },
        { id: 'small', releases: [{ name: '@kioku/b', type: 'patch' }] },
      ],
      releases: [
        { name: '@kioku/a', type: 'major', oldVersion: '0.0.0', newVersion: '1.0.0' },
        { name: '@kioku/b', type: 'patch', oldVersion: '0.0.0', newVersion: '0.0.1' },
      ],
    };
    const packages = ['@kioku/a', '@kioku/b', '@kioku/c'].map(unreleased);
    expect(firstReleaseProblems(plan, packages)).toEqual([
      '.changeset/big.md: @kioku/a is "major", which publishes 1.0.0; before 1.0 a breaking change is "minor"',
      '@kioku/a: its first release would be 1.0.0, not 0.1.0 (its changesets must say "minor")',
      '@kioku/b: its first release would be 0.0.1, not 0.1.0 (its changesets must say "minor")',
      '@kioku/c is unreleased (0.0.0) and no changeset names it: add a "minor" changeset for it (.changeset/first-release-*.md) (its first version is 0.1.0)',
    ]);
  });

  it('wants a changelog that starts at 0.1.0, written by the first `changeset version`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'release-check-'));
    try {
      mkdirSync(join(dir, 'packages/x'), { recursive: true });
      const pkg = (version: string) => ({ directory: 'packages/x', json: { name: '@kioku/x', version } });
      expect(changelogProblems(dir, pkg('0.0.0'))).toEqual([]);
      writeFileSync(
        join(dir, 'packages/x/CHANGELOG.md'),
        '# @kioku/x\n\n## 0.2.0\n\n- b\n\n## 0.1.0\n\n- a\n',
      );
      expect(changelogProblems(dir, pkg('0.2.0'))).toEqual([]);
      expect(changelogProblems(dir, pkg('0.0.0'))).toEqual([
        'packages/x/CHANGELOG.md exists before the first release: `changeset version` writes it at 0.1.0',
      ]);
      writeFileSync(join(dir, 'packages/x/CHANGELOG.md'), '# @kioku/x\n\n## 0.2.0\n\n- b\n');
      expect(changelogProblems(dir, pkg('0.2.0'))).toEqual([
        'packages/x/CHANGELOG.md starts at 0.2.0, not at the first release 0.1.0',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('flags a package that a peer range would push to a major its changesets never asked for', () => {
    const plan: PlanLike = {
      changesets: [
        {
          id: 'a',
          releases: [
            { name: '@kioku/core', type: 'minor' },
            { name: '@kioku/x', type: 'minor' },
          ],
        },
      ],
      releases: [
        { name: '@kioku/core', type: 'minor', oldVersion: '0.1.0', newVersion: '0.2.0' },
        { name: '@kioku/x', type: 'major', oldVersion: '0.1.0', newVersion: '1.0.0' },
        { name: '@kioku/y', type: 'patch', oldVersion: '0.1.0', newVersion: '0.1.1' },
      ],
    };
    expect(bumpsPastChangesets(plan)).toEqual([
      '@kioku/x: 0.1.0 -> 1.0.0 is a major bump, but its changesets say minor',
      '@kioku/y: 0.1.0 -> 0.1.1 is a patch bump, but its changesets say none',
    ]);
  });
});

describe('every publishable package', () => {
  const packages = publishablePackages(root);

  it('is found (all seventeen)', () => {
    expect(packages.map((p) => p.json.name)).toHaveLength(17);
  });

  it.each(packages.map((p) => [p.json.name, p] as const))('%s is ready to publish', (_name, pkg) => {
    expect(packageProblems(root, pkg)).toEqual([]);
    expect(changelogProblems(root, pkg)).toEqual([]);
  });

  it('finds the map options a tsconfig turns on through its extends chain', () => {
    const dir = mkdtempSync(join(tmpdir(), 'release-check-'));
    try {
      mkdirSync(join(dir, 'pkg'));
      writeFileSync(
        join(dir, 'base.json'),
        JSON.stringify({ compilerOptions: { sourceMap: true, declarationMap: true } }),
      );
      writeFileSync(
        join(dir, 'pkg/tsconfig.build.json'),
        JSON.stringify({ extends: '../base.json', compilerOptions: { declarationMap: false } }),
      );
      expect(emittedMaps(join(dir, 'pkg/tsconfig.build.json'))).toEqual(['sourceMap']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a package with a driver or types in dependencies, shipped maps and another Node range is refused', () => {
    const problems = packageProblems(root, {
      directory: 'packages/nowhere',
      json: {
        name: '@kioku/nowhere',
        license: 'MIT',
        engines: { node: '>=18' },
        files: ['dist', 'src'],
        dependencies: { zod: '^4.0.0', 'better-sqlite3': '^12.0.0', '@types/better-sqlite3': '^7.6.13' },
      },
    }).join('\n');
    expect(problems).toMatch(
      /better-sqlite3 is in "dependencies": a driver the app brings is a peerDependency/,
    );
    expect(problems).toMatch(
      /@types\/better-sqlite3 is in "dependencies" but only builds or tests the package/,
    );
    expect(problems).not.toMatch(/zod/);
    expect(problems).toMatch(/engines\.node is ">=18"; use ">=20\.19"/);
    expect(problems).toMatch(/"files" ships src/);
    expect(problems).toMatch(/"files" must end with "!dist\/\*\*\/\*\.map"/);
  });

  it('a package with a source-only export, no LICENSE and a caret peer is refused', () => {
    const problems = packageProblems(root, {
      directory: 'packages/nowhere',
      json: {
        name: '@kioku/nowhere',
        license: 'MIT',
        files: ['dist'],
        exports: { '.': { '@kioku/source': './src/index.ts', default: './dist/index.js' } },
        publishConfig: {
          exports: { '.': { '@kioku/source': './src/index.ts', default: './dist/index.js' } },
        },
        peerDependencies: { '@kioku/core': 'workspace:^' },
      },
    });
    expect(problems.join('\n')).toMatch(/no LICENSE/);
    expect(problems.join('\n')).toMatch(/repository/);
    expect(problems.join('\n')).toMatch(/publishConfig\.exports must equal/);
    expect(problems.join('\n')).toMatch(/\.\/src\/index\.ts is not in "files"/);
    expect(problems.join('\n')).toMatch(/peer @kioku\/core is "workspace:\^"/);
  });
});

describe('the published types', () => {
  it('name a package they import that the package does not declare', () => {
    const dir = mkdtempSync(join(tmpdir(), 'release-check-'));
    try {
      mkdirSync(join(dir, 'packages/x/dist'), { recursive: true });
      writeFileSync(
        join(dir, 'packages/x/dist/index.d.ts'),
        "export type { A } from './a.js';\nimport type { Db } from 'drizzle-orm/pg-core';\n",
      );
      writeFileSync(
        join(dir, 'packages/x/dist/a.d.ts'),
        "import type { Readable } from 'node:stream';\nexport type A = import('zod').JSONType | Readable;\n",
      );
      const pkg = {
        directory: 'packages/x',
        json: {
          name: '@kioku/x',
          publishConfig: { exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } },
          peerDependencies: { 'drizzle-orm': '^0.45.0' },
        },
      };
      expect(undeclaredTypeImports(dir, pkg)).toEqual(['zod']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
