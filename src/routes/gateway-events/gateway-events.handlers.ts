import type { RouteHandler } from "@hono/zod-openapi";
import { gatewaySettingsOf, readConfig } from "../../config";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { parseEvolutionEvent, verifyEvolutionEvent } from "../../gateways/evolution/events";
import { EVENT_FRESHNESS_MS, stalenessOf } from "../../gateways/freshness";
import type { GatewayEventBatch, GatewayName } from "../../gateways/gateway";
import { parseWahaEvent, verifyWahaSignature } from "../../gateways/waha/events";
import { sessionUuidOf } from "../../sessions/session-record";
import { sessionStub } from "../../sessions/stub";
import type * as routes from "./gateway-events.routes";

export const waha: RouteHandler<typeof routes.waha, AppEnv> = async (c) => {
  const settings = gatewaySettingsOf(readConfig(c.env), "waha");
  if (settings?.kind !== "waha") throw new ApiError("not_found", "No such resource.");
  const raw = await c.req.text();
  if (!(await verifyWahaSignature(raw, c.req.header("x-webhook-hmac"), settings.hmacKey))) {
    throw new ApiError(
      "invalid_signature",
      "X-Webhook-Hmac is missing or is not the HMAC-SHA512 of the body under WAHA_WEBHOOK_HMAC_KEY.",
    );
  }
  return c.json(
    { success: true as const, ignored: !(await deliver(c.env, "waha", parseWahaEvent(parse(raw)))) },
    200,
  );
};

export const evolution: RouteHandler<typeof routes.evolution, AppEnv> = async (c) => {
  const settings = gatewaySettingsOf(readConfig(c.env), "evolution");
  if (settings?.kind !== "evolution") throw new ApiError("not_found", "No such resource.");
  const body = parse(await c.req.text());
  if (!(await verifyEvolutionEvent(body, settings.apiKey))) {
    throw new ApiError("invalid_signature", "The event's apikey is missing or is not its instance's token.");
  }
  return c.json(
    { success: true as const, ignored: !(await deliver(c.env, "evolution", parseEvolutionEvent(body))) },
    200,
  );
};

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid JSON.");
  }
}

/**
 * Hands a batch to the session object it names. @returns false when there was nothing to apply:
 * no events, a name that is not one of ours, a session that no longer exists or is on another
 * gateway than the one that sent the batch, or a call dated
 * more than {@link EVENT_FRESHNESS_MS} off the service's clock, or not dated (freshness.ts; logged).
 * The gateway gets a 200 all the same: it retries any other answer, and an event nobody can use,
 * or one that only grows older, gains nothing from being sent again.
 */
async function deliver(env: Env, gateway: GatewayName, batch: GatewayEventBatch | null): Promise<boolean> {
  if (!batch || batch.events.length === 0) return false;
  const now = Date.now();
  const staleness = stalenessOf(batch.sentAt, now);
  if (staleness) {
    console.warn(
      JSON.stringify({
        level: "warn",
        event: "gateway_event_dropped",
        gateway,
        session: batch.sessionId,
        reason: staleness,
        sent_at: batch.sentAt,
        skew_ms: batch.sentAt === null ? null : batch.sentAt - now,
      }),
    );
    return false;
  }
  const id = sessionUuidOf(batch.sessionId);
  if (!id) return false;
  return sessionStub(env, id).gatewayEvents(gateway, batch.events);
}
