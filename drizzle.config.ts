import { defineConfig } from "drizzle-kit";

// drizzle-kit writes SQL migrations into migrations/; `wrangler d1 migrations apply` applies them.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  casing: "snake_case",
});
