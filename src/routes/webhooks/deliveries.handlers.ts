import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { readConfig } from "../../config";
import { findDelivery, listDeliveries as listPage } from "../../db/queries/webhook-deliveries";
import { findWebhookEndpoint, type WebhookEndpointRow } from "../../db/queries/webhook-endpoints";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { formatTimestamp } from "../../lib/time";
import { toDeliveryRecord } from "../../presenters/webhook-delivery";
import { toEndpointRecord } from "../../presenters/webhook-endpoint";
import { acknowledged } from "../../webhooks/post";
import { recoverFailed, resendNow } from "../../webhooks/resend";
import { sendTestEvent } from "../../webhooks/test-event";
import { pageLinks } from "../paging";
import type * as routes from "./deliveries.routes";
import { noEndpoint } from "./webhooks.handlers";

/** The account's endpoint `id`, or 404. */
async function endpointOf(c: Context<AppEnv>, id: string): Promise<WebhookEndpointRow> {
  const endpoint = await findWebhookEndpoint(c.var.db, c.var.principal.accountId, id);
  if (!endpoint) throw noEndpoint();
  return endpoint;
}

/** The account's enabled endpoint `id`: 404 when there is none, 409 when it is turned off. */
async function enabledEndpointOf(c: Context<AppEnv>, id: string): Promise<WebhookEndpointRow> {
  const endpoint = await endpointOf(c, id);
  if (!endpoint.enabled)
    throw new ApiError(
      "webhook_endpoint_disabled",
      'The endpoint is turned off: turn it on with PATCH {"enabled": true} first.',
    );
  return endpoint;
}

const noDelivery = () => new ApiError("not_found", "No delivery of this event to this endpoint.");

export const listDeliveries: RouteHandler<typeof routes.listDeliveries, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const params = c.req.valid("query");
  await endpointOf(c, id);
  const query = {
    statuses: params["filter[status]"] ?? [],
    limit: params.limit,
    cursor: params.cursor ?? null,
  };
  const { rows, more } = await listPage(c.var.db, c.var.principal.accountId, id, query);
  return c.json(
    {
      success: true as const,
      data: rows.map(toDeliveryRecord),
      ...pageLinks(c, rows, { limit: query.limit, cursor: query.cursor, more }),
    },
    200,
  );
};

export const showDelivery: RouteHandler<typeof routes.showDelivery, AppEnv> = async (c) => {
  const { id, event_id } = c.req.valid("param");
  const history = await findDelivery(c.var.db, c.var.principal.accountId, id, event_id);
  if (!history) throw noDelivery();
  return c.json({ success: true as const, data: toDeliveryRecord(history) }, 200);
};

export const retryDelivery: RouteHandler<typeof routes.retryDelivery, AppEnv> = async (c) => {
  const { id, event_id } = c.req.valid("param");
  const { db, principal } = c.var;
  await enabledEndpointOf(c, id);
  const key = { endpointId: id, eventId: event_id };
  if (
    !(await resendNow(c.env, db, c.env.WEBHOOK_QUEUE, principal.accountId, key, {
      defaultGateway: readConfig(c.env).CHATAPP_GATEWAY,
    }))
  )
    throw noDelivery();
  const history = await findDelivery(db, principal.accountId, id, event_id);
  if (!history) throw noDelivery();
  return c.json({ success: true as const, data: toDeliveryRecord(history) }, 200);
};

export const recover: RouteHandler<typeof routes.recover, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { since } = c.req.valid("json");
  await enabledEndpointOf(c, id);
  const { count, more } = await recoverFailed(
    c.var.db,
    c.env.WEBHOOK_QUEUE,
    c.var.principal.accountId,
    id,
    since,
    Date.now(),
  );
  return c.json(
    { success: true as const, data: { since: formatTimestamp(since), deliveries: count, more } },
    202,
  );
};

export const test: RouteHandler<typeof routes.test, AppEnv> = async (c) => {
  const endpoint = await endpointOf(c, c.req.valid("param").id);
  const { event, attemptedAt, result } = await sendTestEvent(
    c.env,
    endpoint,
    toEndpointRecord(endpoint, Date.now()),
  );
  return c.json(
    {
      success: true as const,
      data: {
        succeeded: acknowledged(result),
        event,
        attempted_at: formatTimestamp(attemptedAt),
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        response_excerpt: result.excerpt,
        error: result.error,
      },
    },
    200,
  );
};
