import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import getReleasePlan from '@changesets/get-release-plan';
import { describe, expect, it } from 'vitest';
import { bumpsPastChangesets, type PlanLike } from '../src/bumps.js';
import { packageProblems, publishablePackages } from '../src/packages.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the pending release', () => {
  it('bumps no package further than its changesets say', async () => {
    const plan = await getReleasePlan(root);
    expect(bumpsPastChangesets(plan as PlanLike)).toEqual([]);
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

  it('is found (all fourteen)', () => {
    expect(packages.map((p) => p.json.name)).toHaveLength(14);
  });

  it.each(packages.map((p) => [p.json.name, p] as const))('%s is ready to publish', (_name, pkg) => {
    expect(packageProblems(root, pkg)).toEqual([]);
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
