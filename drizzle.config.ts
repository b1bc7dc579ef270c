import { defineConfig } from 'drizzle-kit';

/** drizzle-kit: `npm run db:generate` writes SQL migrations for packages/store's schema. */
export default defineConfig({
  dialect: 'sqlite',
  schema: './packages/store/src/schema.ts',
  out: './migrations',
});
