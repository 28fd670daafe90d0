import { defineConfig } from 'drizzle-kit';

/**
 * The PostgreSQL store (docs/postgresql.md): drizzle-kit reads `src/store/pg/schema.ts` and writes
 * SQL migrations into `drizzle-pg/` (shipped in the package). `npm run db:generate` runs this
 * config and `drizzle.config.ts` (SQLite).
 */
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/store/pg/schema.ts', './src/store/pg/release-schema.ts'],
  out: './drizzle-pg',
});
