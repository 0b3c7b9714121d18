import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      /** Set by vitest.config.ts: the account databases' migrations, which test/setup.ts applies to each. */
      TEST_MIGRATIONS: D1Migration[];
      /** Set by vitest.config.ts: the directory's migrations, which test/setup.ts applies to `DB`. */
      TEST_DIRECTORY_MIGRATIONS: D1Migration[];
      /** Set by vitest.config.ts: migrations/upgrade/single-database.sql. */
      TEST_UPGRADE_SQL: string;
      /** Set by vitest.config.ts: wrangler.toml's `[[ratelimits]]`. */
      TEST_RATE_LIMITS: { name: string; simple: { limit: number; period: number } }[];
    }
  }
}
