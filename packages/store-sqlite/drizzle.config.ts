import { defineConfig } from 'drizzle-kit';

/** `pnpm db:generate` writes a migration for schema changes; FTS5 lives in custom migrations (`--custom`). */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/schema.ts',
  out: './drizzle',
  migrations: { table: '__kioku_migrations' },
});
