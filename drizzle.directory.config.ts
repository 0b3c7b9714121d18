import { defineConfig } from "drizzle-kit";

// The directory's tables (the `DB` binding): `npx drizzle-kit generate --config
// drizzle.directory.config.ts` writes their SQL migrations into migrations/directory/ (docs/databases.md,
// Databases).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/directory-schema.ts",
  out: "./migrations/directory",
  casing: "snake_case",
});
