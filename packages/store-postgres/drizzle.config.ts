import { defineConfig } from 'drizzle-kit';

// `pnpm db:generate` writes a new migration to ./drizzle after a change to src/schema.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: './drizzle',
});
