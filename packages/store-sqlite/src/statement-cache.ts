import type Database from 'better-sqlite3';

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
