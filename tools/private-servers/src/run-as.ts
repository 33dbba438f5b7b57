import { execFileSync, type SpawnOptions } from 'node:child_process';
import { chownSync } from 'node:fs';

/*
 * PostgreSQL (initdb, pg_ctl, postgres) and PgBouncer refuse to run as root. When this process is root
 * (CI containers, these machines), they run as the `postgres` account the Debian packages create, and the
 * folders they write are given to it.
 */

export interface Account {
  uid: number;
  gid: number;
}

let cached: Account | null | undefined;

/** The account the servers run as: `undefined` when this process is not root (they run as this user). */
export function serverAccount(): Account | undefined {
  if (cached !== undefined) return cached ?? undefined;
  if (process.getuid?.() !== 0) {
    cached = null;
    return undefined;
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    cached = { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'This process runs as root, and PostgreSQL and PgBouncer refuse to: create a `postgres` account (the postgresql package does) or run as another user.',
    );
  }
  return cached;
}

/** spawn / execFile options that run the child as the server account (nothing when not root). */
export function asServerAccount(): Pick<SpawnOptions, 'uid' | 'gid'> {
  const account = serverAccount();
  return account ? { uid: account.uid, gid: account.gid } : {};
}

/** Give `path` to the server account (nothing when not root). */
export function giveToServerAccount(path: string): void {
  const account = serverAccount();
  if (account) chownSync(path, account.uid, account.gid);
}
