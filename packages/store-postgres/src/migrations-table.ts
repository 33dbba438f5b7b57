/** Kioku's migration history, inside its schema: never collides with the host app's `__drizzle_migrations`. */
export const MIGRATIONS_TABLE = '__kioku_migrations';
