import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      /** Set by vitest.config.ts: the SQL migrations that test/setup.ts applies. */
      TEST_MIGRATIONS: D1Migration[];
      /** Set by vitest.config.ts: wrangler.toml's `[[ratelimits]]`. */
      TEST_RATE_LIMITS: { name: string; simple: { limit: number; period: number } }[];
    }
  }
}
