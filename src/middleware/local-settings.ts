import type { MiddlewareHandler } from "hono";
import { ConfigError, localSettingsProblem, readConfig } from "../config";
import type { AppEnv } from "../env";

/**
 * Refuses every request while a local-development setting (`MEDIA_ALLOW_HTTP_LOCALHOST`,
 * `WEBHOOK_ALLOW_HTTP_LOCALHOST`) is true in a deployment that is not local: 503
 * `service_misconfigured` naming the settings and the host (src/config.ts
 * `localSettingsProblem`: `PUBLIC_URL` when set, else this request's host). With `PUBLIC_URL`
 * set, `readConfig` itself throws that problem (so queue batches, cron runs and alarms refuse
 * too); otherwise the request's host is judged here. A configuration broken in another way is
 * left to the routes that read it, as before: pages that need no configuration still answer.
 * @throws ConfigError (503) as described.
 */
export const localSettingsGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  let refusal: ConfigError | null;
  try {
    refusal = localSettingsProblem(readConfig(c.env), c.req.url);
  } catch (error) {
    if (!(error instanceof ConfigError) || error.status === 503) throw error;
    refusal = null;
  }
  if (refusal) throw refusal;
  await next();
};
