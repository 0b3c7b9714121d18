import { defineConfig } from "drizzle-kit";

// The account databases' tables (every `DB_ACCOUNTS_<n>` binding): drizzle-kit writes their SQL
// migrations into migrations/accounts/; `wrangler d1 migrations apply` applies them to each account
// database (docs/databases.md, Databases). The directory's tables have their own config,
// drizzle.directory.config.ts.
export default defineConfig({
  dialect: "sqlite",
  // The tables live in one file per family in src/db/schema/; index.ts exports every one of them.
  schema: "./src/db/schema/index.ts",
  out: "./migrations/accounts",
  casing: "snake_case",
});
