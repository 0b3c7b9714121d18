import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { methodNotAllowed } from "hono/method-not-allowed";
import { ConfigError, GATEWAY_NAMES, localSettingsProblem, readConfig } from "./config";
import { ACCOUNT_MOVING_RETRY_SECONDS, AccountMoving } from "./db/databases";
import type { AppEnv } from "./env";
import { ApiError, ERROR_STATUS, type ErrorCode, problemResponse } from "./errors";
import { log } from "./lib/log";
import { adminAuth, apiKeyAuth, v1Auth } from "./middleware/auth";
import { bodyGuard, bodyLimit } from "./middleware/body-guard";
import { localSettingsGuard } from "./middleware/local-settings";
import { adminRateLimit, apiRateLimit, gatewayRateLimit, publicRateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { accountRoutes } from "./routes/account/account.index";
import { adminRoutes } from "./routes/admin/admin.index";
import { apiKeyRoutes } from "./routes/api-keys/api-keys.index";
import { appRoutes } from "./routes/apps/apps.index";
import { archiveRoutes } from "./routes/archives/archives.index";
import { campaignRoutes } from "./routes/campaigns/campaigns.index";
import { contactRoutes } from "./routes/contacts/contacts.index";
import { erasureRoutes } from "./routes/erasures/erasures.index";
import { eventRoutes, registerEventWebhooks } from "./routes/events/events.index";
import { gatewayEventRoutes } from "./routes/gateway-events/gateway-events.index";
import { linkRoutes } from "./routes/link/link.index";
import { mediaRoutes } from "./routes/media/media.index";
import { messageRoutes } from "./routes/messages/messages.index";
import { numberCheckRoutes } from "./routes/number-checks/number-checks.index";
import { json, publicOperation, TAGS, withSharedProblems } from "./routes/openapi";
import { optOutRoutes } from "./routes/opt-outs/opt-outs.index";
import { otpRoutes } from "./routes/otp/otp.index";
import { otpStatsRoutes } from "./routes/otp-stats/otp-stats.index";
import { createRouter } from "./routes/router";
import { sandboxRoutes } from "./routes/sandbox/sandbox.index";
import { sessionRoutes } from "./routes/sessions/sessions.index";
import { templateRoutes } from "./routes/templates/templates.index";
import { registerTestEventWebhook, webhookRoutes } from "./routes/webhooks/webhooks.index";
import { consoleRoutes } from "./web/console/console.index";
import { docsRoutes } from "./web/docs/docs.index";
import { linkPageGuard, pairPageGuard } from "./web/link/page-guard";

const healthRoute = createRoute({
  operationId: "getHealth",
  ...publicOperation,
  tags: ["Health"],
  method: "get",
  path: "/health",
  summary: "Whether the service runs and its configuration is sound (no authentication)",
  responses: {
    200: json(
      z.object({
        status: z.literal("ok"),
        gateway: z.enum(GATEWAY_NAMES).openapi({ description: "`CHATAPP_GATEWAY`" }),
      }),
      "Up",
    ),
    503: json(
      z.object({
        status: z.literal("unavailable"),
        code: z.enum(["gateway_misconfigured", "service_misconfigured"]),
        reason: z.string().openapi({ description: "The setting that is missing or malformed." }),
      }),
      "The configuration is broken",
    ),
  },
});

const CODE_BY_STATUS = new Map<number, ErrorCode>();
for (const [code, status] of Object.entries(ERROR_STATUS) as [ErrorCode, number][]) {
  if (!CODE_BY_STATUS.has(status)) CODE_BY_STATUS.set(status, code);
}

function handleError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return problemResponse(c, err);
  if (err instanceof ConfigError) return problemResponse(c, configProblem(err));
  if (err instanceof AccountMoving)
    return problemResponse(
      c,
      new ApiError("account_moving", "The account is moving between databases; try again shortly.", {
        headers: { "Retry-After": String(ACCOUNT_MOVING_RETRY_SECONDS) },
      }),
    );
  if (err instanceof HTTPException && err.status < 500) {
    const code = CODE_BY_STATUS.get(err.status) ?? "validation_failed";
    return problemResponse(c, new ApiError(code, err.message || "The request was refused."));
  }
  log.error(null, {
    request_id: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    error: err.message,
    stack: err.stack,
  });
  return problemResponse(
    c,
    new ApiError("internal_error", "An unexpected error occurred. Quote the request id when you report it."),
  );
}

/** Builds the Worker's HTTP application: middleware, error model, routes and API reference. */
export function createApp() {
  const app = createRouter();

  app.use("*", requestId);
  // A local-development setting in a deployment that is not local refuses every request, pages
  // included, before anything else runs (docs/configuration.md, Overview); /health answers it in its shape.
  app.use("*", async (c, next) => (c.req.path === "/health" ? next() : localSettingsGuard(c, next)));
  // A path that exists with other methods: 405 with `Allow` (RFC 9110 §15.5.6). Hono's middleware
  // acts on the 404 of `notFound` below, which is why that one is returned, not thrown: a thrown
  // error would mark the request as failed and Hono would leave it alone.
  app.use(
    "*",
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here.`, {
          headers: { Allow: methods.join(", ") },
        });
      },
    }),
  );
  // The hosted link page's headers and HTML error pages, registered before the middleware below
  // so that their failures (a bad token, a broken configuration) are pages too, never JSON.
  app.use("/link/:token", ...linkPageGuard);
  app.use("/sandbox/pair/:token", ...pairPageGuard);
  // A deployment whose configuration is broken says so at its first request (docs/configuration.md,
  // Overview).
  for (const path of ["/v1/*", "/sandbox/*", "/gateway/*", "/admin/*", "/link/*"]) {
    app.use(path, async (c, next) => {
      readConfig(c.env);
      await next();
    });
  }
  // Rate limits (src/middleware/rate-limit.ts): per client IP where no key is taken (and on
  // `/admin`, before its token is checked).
  app.use("/link/*", publicRateLimit);
  app.use("/sandbox/pair/*", publicRateLimit);
  app.use("/gateway/*", gatewayRateLimit);
  app.use("/media/*", gatewayRateLimit);
  // The API key, or on the live route a link token (browsers); `/link/*` takes link tokens only.
  // Then the per-key limit (sends add theirs with their route).
  app.use("/v1/*", v1Auth, apiRateLimit);
  app.use("/sandbox/sessions/*", apiKeyAuth, apiRateLimit);
  app.use("/admin/*", adminRateLimit, adminAuth);
  app.use("*", bodyLimit);
  app.use("*", bodyGuard);

  app.onError(handleError);
  app.notFound((c) => problemResponse(c, new ApiError("not_found", "No such resource.")));

  app.openapi(healthRoute, (c) => {
    try {
      const config = readConfig(c.env);
      const refusal = localSettingsProblem(config, c.req.url);
      if (refusal) throw refusal;
      return c.json({ status: "ok" as const, gateway: config.gateway.kind }, 200);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const problem = configProblem(error);
      const code = error.gateway ? ("gateway_misconfigured" as const) : ("service_misconfigured" as const);
      return c.json({ status: "unavailable" as const, code, reason: problem.detail }, 503);
    }
  });
  app.route("/admin", adminRoutes);
  app.route("/v1/account/archives", archiveRoutes);
  app.route("/v1/account", accountRoutes);
  app.route("/v1/api-keys", apiKeyRoutes);
  app.route("/v1/chatapp/sessions", sessionRoutes);
  app.route("/v1/chatapp/sessions", templateRoutes);
  app.route("/v1/chatapp/sessions", numberCheckRoutes);
  app.route("/v1/chatapp/messages", messageRoutes);
  app.route("/v1/chatapp/campaigns", campaignRoutes);
  app.route("/v1/apps", appRoutes);
  app.route("/v1/events", eventRoutes);
  app.route("/v1/webhooks", webhookRoutes);
  app.route("/v1/opt-outs", optOutRoutes);
  app.route("/v1/contacts", contactRoutes);
  app.route("/v1/erasures", erasureRoutes);
  app.route("/v1", otpRoutes);
  app.route("/v1", otpStatsRoutes);
  app.route("/sandbox", sandboxRoutes);
  app.route("/gateway", gatewayEventRoutes);
  app.route("/media", mediaRoutes);
  app.route("/link", linkRoutes);
  app.route("/console", consoleRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key issued by the admin API: `Authorization: Bearer sk_…`.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "LinkToken", {
    type: "apiKey",
    in: "query",
    name: "token",
    description:
      "A link token (`POST /v1/chatapp/sessions/{id}/link-url`): in the path of `/link/{token}/…`, or as `?token=` on the live route. It reaches one session only.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "AdminToken", {
    type: "http",
    scheme: "bearer",
    description: "The ADMIN_TOKEN secret.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "WebhookSignature", {
    type: "apiKey",
    in: "header",
    name: "webhook-signature",
    description:
      "What a webhook receiver checks: the Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with the endpoint's `whsec_` secret), as in docs/webhooks.md, Webhooks.",
  });
  registerEventWebhooks(app.openAPIRegistry);
  registerTestEventWebhook(app.openAPIRegistry);
  app.get("/openapi.json", (c) =>
    c.json(
      withSharedProblems(
        app.getOpenAPI31Document({
          openapi: "3.1.0",
          info: {
            title: "Chat messaging and one-time-code API",
            version: "1.0.0",
            description:
              "Link chat-application accounts as sessions, send paced messages, and send and verify one-time codes. " +
              "Every error is RFC 9457 `application/problem+json` with a stable `code`. " +
              "A deployment that sets a local-development setting (`MEDIA_ALLOW_HTTP_LOCALHOST` or `WEBHOOK_ALLOW_HTTP_LOCALHOST`) " +
              "where it is not local (`PUBLIC_URL`, or unset, the request's host, is not `localhost` or `127.0.0.1`) " +
              "answers every request 503 `service_misconfigured` naming them.",
            license: { name: "Proprietary" },
            contact: { name: "The operator of this deployment" },
          },
          // `x-internal: false`: the API is for the public (OWASP API9:2023, inventory).
          servers: [{ url: new URL(c.req.url).origin, "x-internal": false }],
          tags: TAGS,
        }),
      ),
    ),
  );
  app.route("/docs", docsRoutes);
  return app;
}

/**
 * A configuration error as the problem it is rendered as (500, or the 503 of
 * `ConfigError.status`); logged, since only operators can fix it.
 */
function configProblem(error: ConfigError): ApiError {
  log.error(null, { config: error.message });
  return new ApiError(
    error.gateway ? "gateway_misconfigured" : "service_misconfigured",
    `The service is misconfigured: ${error.message}.`,
    error.status === 503 ? { status: 503 } : {},
  );
}
