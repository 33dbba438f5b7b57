/**
 * How the store bench spreads a size's records over users (`--users N`): one database, N users with about
 * size ÷ N records each. The searched, read and written user is always `bench-user` (the bench's scope); the
 * other N − 1 users (`bench-other-<i>`) only fill the database around it, as an application's other users do.
 * Without `--users`, every record is bench-user's.
 */
export const SEARCHED_USER = 'bench-user';

export interface Layout {
  /** Users in the database, the searched one included (1: only bench-user). */
  users: number;
}

export const ONE_USER: Layout = { users: 1 };

/** Records of the searched user at `size` records in all. */
export function searchedShare(layout: Layout, size: number): number {
  return Math.floor(size / layout.users);
}

/** The other users and how many records each holds, so that every user holds about size ÷ users. */
export function otherUsers(layout: Layout, size: number): Array<{ userId: string; records: number }> {
  const others = layout.users - 1;
  if (others <= 0) return [];
  const rest = size - searchedShare(layout, size);
  const base = Math.floor(rest / others);
  const extra = rest - base * others;
  return Array.from({ length: others }, (_, i) => ({
    userId: `bench-other-${i + 1}`,
    records: base + (i < extra ? 1 : 0),
  }));
}

/** `--users N`: at least 1. */
export function parseLayout(value: string | undefined): Layout {
  if (value === undefined) return ONE_USER;
  const users = Number(value);
  if (!Number.isInteger(users) || users < 1) throw new Error('--users takes a positive integer');
  return { users };
}
