import { defineConfig } from 'drizzle-kit';

/** drizzle-kit reads the schema from src/ and writes SQL migrations into drizzle/ (shipped in the package). */
export default defineConfig({
  dialect: 'sqlite',
  schema: ['./src/store/sqlite/schema.ts', './src/store/sqlite/release-schema.ts'],
  out: './drizzle',
});
