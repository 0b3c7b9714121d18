import { defineConfig } from "drizzle-kit";

// drizzle-kit writes SQL migrations into migrations/; `wrangler d1 migrations apply` applies them.
export default defineConfig({
  dialect: "sqlite",
  // The tables live in one file per family in src/db/schema/; index.ts exports every one of them.
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
  casing: "snake_case",
});
