import type Database from 'better-sqlite3';

/** Distinct SQL texts kept prepared; past it the oldest goes (drizzle's queries are a few dozen shapes). */
const MAX_STATEMENTS = 500;

/**
 * `db` with `prepare` answered from a cache of statements by SQL text, for drizzle: its better-sqlite3
 * driver prepares every query it runs, and preparing was a tenth of a turn's time. Only drizzle gets this
 * view (it runs one statement at a time, to completion); the stores' own statements use the plain
 * connection. drizzle switches a statement to raw mode for some reads and never back, so a statement
 * handed out again is reset first.
 */
export function withStatementCache(db: Database.Database): Database.Database {
  const statements = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    const cached = statements.get(source);
    if (cached) {
      if (cached.reader) cached.raw(false);
      return cached;
    }
    const statement = db.prepare(source);
    if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
    statements.set(source, statement);
    return statement;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'prepare') return prepare;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * A `prepare` that prepares each SQL text once, for the statements a store builds itself (a few fixed
 * shapes, so nothing is evicted).
 */
export function preparedOnce(db: Database.Database): (source: string) => Database.Statement {
  const statements = new Map<string, Database.Statement>();
  return (source) => {
    let statement = statements.get(source);
    if (!statement) {
      statement = db.prepare(source);
      statements.set(source, statement);
    }
    return statement;
  };
}
