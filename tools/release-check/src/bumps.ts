/** The bump types changesets knows, in order of size. */
const RANK = { none: 0, patch: 1, minor: 2, major: 3 } as const;
export type BumpType = keyof typeof RANK;

/** The parts of a changesets release plan (`@changesets/get-release-plan`) this check reads. */
export interface PlanLike {
  changesets: ReadonlyArray<{ id: string; releases: ReadonlyArray<{ name: string; type: BumpType }> }>;
  releases: ReadonlyArray<{ name: string; type: BumpType; oldVersion: string; newVersion: string }>;
}

/**
 * Every package the plan would bump further than its changesets say: a package named only in `minor`
 * changesets must not become a major (as a peer range that excludes the next 0.x minor makes changesets
 * do), and a package no changeset names must not be released at all.
 */
export function bumpsPastChangesets(plan: PlanLike): string[] {
  const declared = new Map<string, BumpType>();
  for (const changeset of plan.changesets) {
    for (const release of changeset.releases) {
      const before = declared.get(release.name) ?? 'none';
      if (RANK[release.type] > RANK[before]) declared.set(release.name, release.type);
    }
  }
  const problems: string[] = [];
  for (const release of plan.releases) {
    const allowed = declared.get(release.name) ?? 'none';
    if (RANK[release.type] > RANK[allowed]) {
      problems.push(
        `${release.name}: ${release.oldVersion} -> ${release.newVersion} is a ${release.type} bump, but its changesets say ${allowed}`,
      );
    }
  }
  return problems;
}
