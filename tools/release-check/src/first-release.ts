import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanLike } from './bumps.js';
import type { PublishablePackage } from './packages.js';

/** The version of a package that was never published: its first `changeset version` makes it 0.1.0. */
export const UNRELEASED = '0.0.0';
/** The first published version of every package (see .changeset/README.md). */
export const FIRST_VERSION = '0.1.0';

/**
 * What the pending release would get wrong about first releases: a major bump (in 0.x, changesets makes it
 * 1.0.0; a breaking change before 1.0 is a minor), and an unreleased package that would not come out at
 * exactly 0.1.0 (left out of every changeset, `changeset publish` would publish it as 0.0.0; a patch
 * changeset alone would make it 0.0.1).
 */
export function firstReleaseProblems(plan: PlanLike, packages: readonly PublishablePackage[]): string[] {
  const problems: string[] = [];
  for (const changeset of plan.changesets) {
    for (const release of changeset.releases) {
      if (release.type === 'major') {
        problems.push(
          `.changeset/${changeset.id}.md: ${release.name} is "major", which publishes 1.0.0; before 1.0 a breaking change is "minor"`,
        );
      }
    }
  }
  for (const { json } of packages) {
    if (json.version !== UNRELEASED) continue;
    const release = plan.releases.find((r) => r.name === json.name);
    if (!release) {
      problems.push(
        `${json.name} is unreleased (${UNRELEASED}) and no changeset names it: add a "minor" changeset for it (.changeset/first-release-*.md) (its first version is ${FIRST_VERSION})`,
      );
    } else if (release.newVersion !== FIRST_VERSION) {
      problems.push(
        `${json.name}: its first release would be ${release.newVersion}, not ${FIRST_VERSION} (its changesets must say "minor")`,
      );
    }
  }
  return problems;
}

/**
 * A changelog that starts at the first release: none before it (`changeset version` writes it), and once
 * written, its oldest version heading is 0.1.0 (no entries against versions nobody installed).
 */
export function changelogProblems(root: string, { directory, json }: PublishablePackage): string[] {
  const file = join(root, directory, 'CHANGELOG.md');
  if (!existsSync(file)) return [];
  if (json.version === UNRELEASED) {
    return [
      `${directory}/CHANGELOG.md exists before the first release: \`changeset version\` writes it at ${FIRST_VERSION}`,
    ];
  }
  const versions = [...readFileSync(file, 'utf8').matchAll(/^## (\S+)/gm)].map((m) => m[1]);
  const oldest = versions.at(-1);
  return oldest === FIRST_VERSION
    ? []
    : [
        `${directory}/CHANGELOG.md starts at ${oldest ?? 'no version'}, not at the first release ${FIRST_VERSION}`,
      ];
}
