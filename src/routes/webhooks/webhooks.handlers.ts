import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { readConfig } from "../../config";
import {
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from "../../db/queries/webhook-endpoints";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { assertCanRedirectEndpoint, subscribableEvents } from "../../keys/event-access";
import { webhookSecret } from "../../lib/crypto";
import { publicHttpsUrlProblem } from "../../lib/media-url";
import { toEndpointRecord } from "../../presenters/webhook-endpoint";
import { endpointSecretsKey, sealEndpointSecret, secretPrefixOf } from "../../webhooks/secret";
import type * as routes from "./webhooks.routes";
import { MAX_WEBHOOK_ENDPOINTS, PREVIOUS_SECRET_SECONDS } from "./webhooks.schemas";

/** 404 for an endpoint id the account does not have. */
export const noEndpoint = () => new ApiError("not_found", "No such webhook endpoint.");

/**
 * 422 on `url` when it is an `http://localhost` URL and the deployment does not allow those
 * (`WEBHOOK_ALLOW_HTTP_LOCALHOST`); the request schema has already refused every other bad URL.
 */
function assertUrlAllowed(c: Context<AppEnv>, url: string | undefined): void {
  if (url === undefined || readConfig(c.env).WEBHOOK_ALLOW_HTTP_LOCALHOST) return;
  const problem = publicHttpsUrlProblem(url);
  if (problem) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { url: [problem] },
    });
  }
}

/**
 * A new signing secret for endpoint `endpointId`: in clear, to answer once, and as stored (sealed,
 * bound to the endpoint, with its prefix; src/webhooks/secret.ts).
 * @throws ConfigError (500 `service_misconfigured`) when `OTP_SECRET` is missing or short.
 */
async function newSecret(c: Context<AppEnv>, endpointId: string) {
  const secret = webhookSecret();
  const sealed = await sealEndpointSecret(await endpointSecretsKey(c.env), endpointId, secret);
  return { secret, stored: { sealed, prefix: secretPrefixOf(secret) } };
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const rows = await listWebhookEndpoints(c.var.db, c.var.principal.accountId);
  const now = Date.now();
  return c.json({ success: true as const, data: rows.map((row) => toEndpointRecord(row, now)) }, 200);
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  assertUrlAllowed(c, body.url);
  const events = subscribableEvents(c.var.principal.scopes, body.events ?? null);
  const now = Date.now();
  const id = crypto.randomUUID();
  const { secret, stored } = await newSecret(c, id);
  const row = await insertWebhookEndpoint(
    c.var.db,
    c.var.principal.accountId,
    id,
    {
      url: body.url,
      description: body.description ?? null,
      events,
      enabled: body.enabled ?? true,
    },
    stored,
    MAX_WEBHOOK_ENDPOINTS,
    now,
    c.var.principal.apiKeyId,
  );
  if (!row) {
    throw new ApiError(
      "webhook_endpoint_limit",
      `An account may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints: delete one first.`,
    );
  }
  return c.json({ success: true as const, data: { ...toEndpointRecord(row, now), secret } }, 201);
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findWebhookEndpoint(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw noEndpoint();
  return c.json({ success: true as const, data: toEndpointRecord(row, Date.now()) }, 200);
};

export const update: RouteHandler<typeof routes.update, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const body = c.req.valid("json");
  const { db, principal } = c.var;
  // Not found comes before a field error about the URL, and that before the key's scopes.
  const endpoint = await findWebhookEndpoint(db, principal.accountId, id);
  if (!endpoint) throw noEndpoint();
  assertUrlAllowed(c, body.url);
  const events = body.events === undefined ? undefined : subscribableEvents(principal.scopes, body.events);
  const redirects = body.url !== undefined && body.url !== endpoint.url;
  if (redirects) assertCanRedirectEndpoint(principal.scopes, events === undefined ? endpoint.events : events);
  const now = Date.now();
  const row = await updateWebhookEndpoint(
    db,
    principal.accountId,
    id,
    {
      url: body.url,
      description: body.description,
      events,
      enabled: body.enabled,
      urlSetBy: redirects ? principal.apiKeyId : undefined,
    },
    now,
  );
  if (!row) throw noEndpoint();
  return c.json({ success: true as const, data: toEndpointRecord(row, now) }, 200);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  if (!(await deleteWebhookEndpoint(c.var.db, c.var.principal.accountId, id, Date.now()))) throw noEndpoint();
  return c.body(null, 204);
};

export const rotateSecret: RouteHandler<typeof routes.rotateSecret, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const seconds = c.req.valid("json").expires_in_seconds ?? PREVIOUS_SECRET_SECONDS.default;
  const now = Date.now();
  const { secret, stored } = await newSecret(c, id);
  const row = await rotateWebhookSecret(
    c.var.db,
    c.var.principal.accountId,
    id,
    stored,
    seconds === 0 ? null : now + seconds * 1000,
    now,
  );
  if (!row) throw noEndpoint();
  return c.json({ success: true as const, data: { ...toEndpointRecord(row, now), secret } }, 200);
};
