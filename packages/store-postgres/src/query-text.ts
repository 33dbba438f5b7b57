import { noteQueryText } from '@kioku/core/adapter';
import type { Sql } from 'postgres';

type Call = (...args: unknown[]) => unknown;

/**
 * The client as Kioku's stores use it: each statement sent with `unsafe` (every store statement, and
 * drizzle's, which go through it) reports its SQL text first, inside transactions too (`noteQueryText`:
 * `db.query.text` on the store call's span when the app opted in, a no-op otherwise). The text with its
 * `$1` placeholders: the bound values are never seen. A proxy, so a client the app passed in is left as it is.
 */
export function reportingQueryText<T extends Sql>(client: T): T {
  const unsafe = client.unsafe as unknown as Call;
  // A transaction's client has no `begin` (it has `savepoint`).
  const begin = client.begin as unknown as Call | undefined;
  const reportingUnsafe = (text: string, ...rest: unknown[]) => {
    noteQueryText(text);
    return unsafe(text, ...rest);
  };
  // `begin(fn)` or `begin(options, fn)`: the transaction's client reports its statements too.
  const reportingBegin = (...args: unknown[]) => {
    const fn = args.at(-1) as (tx: Sql) => unknown;
    args[args.length - 1] = (tx: Sql) => fn(reportingQueryText(tx));
    return begin!(...args);
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'unsafe') return reportingUnsafe;
      if (property === 'begin' && begin !== undefined) return reportingBegin;
      return Reflect.get(target, property);
    },
  });
}
