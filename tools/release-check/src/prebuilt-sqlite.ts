import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { run } from './run-command.js';

export interface PrebuiltSqlite {
  /** The better-sqlite3 version the workspace has built (the app pins the same one). */
  version: string;
  /** Environment for `npm install`: prebuild-install finds the binary there instead of GitHub. */
  env: Record<string, string>;
}

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) downloads its binary from
 * GitHub, and compiles SQLite from source (minutes) when it cannot. The workspace already compiled that
 * very version for this Node, so it is offered the way a team's offline mirror would: a tarball in
 * prebuild-install's layout (`build/Release/better_sqlite3.node`, named
 * `better-sqlite3-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`) in a directory named by
 * `npm_config_better_sqlite3_local_prebuilds`. Undefined when the workspace's binary does not load in this
 * Node (another ABI): then the install compiles it, slower but the same.
 */
export async function prebuiltSqlite(root: string, work: string): Promise<PrebuiltSqlite | undefined> {
  const fromStore = createRequire(join(root, 'packages/store-sqlite/package.json'));
  const manifest = fromStore.resolve('better-sqlite3/package.json');
  const packageDir = dirname(manifest);
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  const binary = join(packageDir, 'build/Release/better_sqlite3.node');
  if (!existsSync(binary)) return undefined;
  try {
    const Database = fromStore('better-sqlite3') as new (file: string) => { close(): void };
    new Database(':memory:').close();
  } catch {
    return undefined;
  }
  const directory = join(work, 'prebuilds');
  mkdirSync(directory);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run(
    'tar',
    ['-czf', join(directory, name), '-C', packageDir, 'build/Release/better_sqlite3.node'],
    root,
  );
  return { version, env: { npm_config_better_sqlite3_local_prebuilds: directory } };
}
