import { defineConfig } from 'drizzle-kit';

/** drizzle-kit for the PostgreSQL engine: `npm run db:generate:pg` writes `migrations-pg/` from packages/store's pg schema. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './packages/store/src/pg/schema.ts',
  out: './migrations-pg',
});
