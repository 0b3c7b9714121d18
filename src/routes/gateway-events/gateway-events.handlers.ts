import type { RouteHandler } from "@hono/zod-openapi";
import { gatewaySettingsOf, readConfig } from "../../config";
import { databaseFor, directoryOf, everyAccountDatabase } from "../../db/databases";
import { sessionOfWabaNumber } from "../../db/queries/cloud-api";
import { routeOf } from "../../db/queries/directory";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import {
  messagesChangeEvents,
  qualityUpdateOf,
  SIGNATURE_HEADER,
  userIdUpdateEvents,
  verifyCloudApiSignature,
  webhookChanges,
} from "../../gateways/cloud-api/events";
import { applyTemplateStatusUpdate } from "../../gateways/cloud-api/template-status";
import { parseEvolutionEvent, verifyEvolutionEvent } from "../../gateways/evolution/events";
import { EVENT_FRESHNESS_MS, stalenessOf } from "../../gateways/freshness";
import type { GatewayEvent, GatewayEventBatch, GatewayName } from "../../gateways/gateway";
import { parseWahaEvent, verifyWahaSignature } from "../../gateways/waha/events";
import { timingSafeEqual } from "../../lib/crypto";
import { log } from "../../lib/log";
import { verifyByIncoming } from "../../otp/reverse";
import { sessionUuidOf } from "../../sessions/session-record";
import { sessionStub } from "../../sessions/stub";
import type * as routes from "./gateway-events.routes";

export const waha: RouteHandler<typeof routes.waha, AppEnv> = async (c) => {
  const settings = gatewaySettingsOf(readConfig(c.env), "waha");
  if (!settings) throw new ApiError("not_found", "No such resource.");
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
  if (!settings) throw new ApiError("not_found", "No such resource.");
  const body = parse(await c.req.text());
  if (!(await verifyEvolutionEvent(body, settings.apiKey))) {
    throw new ApiError("invalid_signature", "The event's apikey is missing or is not its instance's token.");
  }
  return c.json(
    { success: true as const, ignored: !(await deliver(c.env, "evolution", parseEvolutionEvent(body))) },
    200,
  );
};

/** Meta's subscription handshake (Meta's "Webhooks" guide, "Verification requests"). */
export const cloudApiHandshake: RouteHandler<typeof routes.cloudApiHandshake, AppEnv> = (c) => {
  const settings = gatewaySettingsOf(readConfig(c.env), "cloud_api");
  if (!settings) throw new ApiError("not_found", "No such resource.");
  const query = c.req.valid("query");
  const token = query["hub.verify_token"] ?? "";
  if (query["hub.mode"] !== "subscribe" || !timingSafeEqual(token, settings.verifyToken)) {
    throw new ApiError(
      "verify_token_mismatch",
      "hub.mode must be subscribe and hub.verify_token must equal CLOUD_API_VERIFY_TOKEN.",
    );
  }
  return c.text(query["hub.challenge"] ?? "", 200);
};

/**
 * Meta's webhook post: signed with the app secret; each change is dispatched by its `field`.
 * `messages` changes are grouped by business number and handed to that number's session object
 * ({@link deliverToNumber}); `message_template_status_update` updates the templates;
 * `phone_number_quality_update` makes the number's session read its quality again (docs/sessions.md,
 * Session health); `user_id_update` (a user's BSUID changed) goes to the number's session as a
 * `contact` event, as `messages` changes do; other fields are not acted on here. No freshness window applies
 * (freshness.ts): Meta's body carries no send time, Meta retries a webhook for up to 7 days, and
 * a replayed body is harmless (receipts move a message only forward, each once; an incoming
 * message is stored once per wamid). The session object's failure (D1 refusing the receipts)
 * answers 500, so Meta delivers the body again.
 */
export const cloudApi: RouteHandler<typeof routes.cloudApi, AppEnv> = async (c) => {
  const settings = gatewaySettingsOf(readConfig(c.env), "cloud_api");
  if (!settings) throw new ApiError("not_found", "No such resource.");
  const raw = await c.req.text();
  if (!(await verifyCloudApiSignature(raw, c.req.header(SIGNATURE_HEADER), settings.appSecret))) {
    throw new ApiError(
      "invalid_signature",
      "X-Hub-Signature-256 is missing or is not sha256= and the HMAC-SHA256 of the body under CLOUD_API_APP_SECRET.",
    );
  }
  const changes = webhookChanges(parse(raw)) ?? [];
  const byNumber = new Map<string, GatewayEvent[]>();
  let applied = false;
  for (const change of changes) {
    switch (change.field) {
      case "messages": {
        const found = messagesChangeEvents(change.value);
        if (found)
          byNumber.set(found.phoneNumberId, [...(byNumber.get(found.phoneNumberId) ?? []), ...found.events]);
        break;
      }
      case "message_template_status_update": {
        const result = await applyTemplateStatusUpdate(c.env, change.wabaId, change.value, change.time);
        if (result.rowsUpdated > 0 || result.eventsRecorded > 0) applied = true;
        break;
      }
      case "phone_number_quality_update": {
        // Its number is named by its display form: the session is found by WABA and phone.
        const update = qualityUpdateOf(change.value, Date.now());
        const sessionId =
          update && (await sessionOfWabaNumberAnywhere(c.env, change.wabaId, update.phoneNumber));
        if (update && sessionId && (await applyToSession(c.env, sessionId, "cloud_api", [update.event])))
          applied = true;
        break;
      }
      case "user_id_update": {
        // A user's BSUID changed: linked to their contact like a `messages` change's events.
        const found = userIdUpdateEvents(change.value, change.time, Date.now());
        if (found)
          byNumber.set(found.phoneNumberId, [...(byNumber.get(found.phoneNumberId) ?? []), ...found.events]);
        break;
      }
      // Other fields Meta may send (groups, …) are not acted on.
      default:
        break;
    }
  }
  for (const [phoneNumberId, events] of byNumber) {
    if (await deliverToNumber(c.env, phoneNumberId, events)) applied = true;
  }
  return c.json({ success: true as const, ignored: !applied }, 200);
};

/**
 * The session of WABA `wabaId`'s number `phoneNumber`, in whichever account database holds it.
 * A quality update is rare: each database is asked in turn.
 */
async function sessionOfWabaNumberAnywhere(
  env: Env,
  wabaId: string,
  phoneNumber: string,
): Promise<string | null> {
  for (const { db } of everyAccountDatabase(env)) {
    const sessionId = await sessionOfWabaNumber(db, wabaId, phoneNumber);
    if (sessionId) return sessionId;
  }
  return null;
}

/**
 * Hands events to the session of business number `phoneNumberId` (found in the directory).
 * @returns false when there is nothing to apply or no session holds the number (Meta gets a 200
 *   all the same: a number we do not know gains nothing from a retry).
 */
async function deliverToNumber(env: Env, phoneNumberId: string, events: GatewayEvent[]): Promise<boolean> {
  if (events.length === 0) return false;
  const number = await routeOf(directoryOf(env), "phone_number_id", phoneNumberId);
  if (!number?.sessionId) {
    log.warn("gateway_event_dropped", {
      gateway: "cloud_api",
      phone_number_id: phoneNumberId,
      reason: "unknown_number",
    });
    return false;
  }
  return applyToSession(env, number.sessionId, "cloud_api", events);
}

/**
 * Hands `events` to the object of session `sessionId` (its uuid), then verifies reverse OTPs by
 * the incoming messages among them (src/otp/reverse.ts `verifyByIncoming`, on a floor above the
 * session object's, hence here), replays included: a verification lost after its message was
 * stored is made good when the gateway delivers the message again, and one already made is not
 * made twice. A verification D1 refuses fails the call (500), so the gateway delivers again.
 * @returns false when the object applied nothing (no such session, or on another gateway).
 */
async function applyToSession(
  env: Env,
  sessionId: string,
  gateway: GatewayName,
  events: GatewayEvent[],
): Promise<boolean> {
  const received = await sessionStub(env, sessionId).gatewayEvents(gateway, events);
  if (received === null) return false;
  for (const message of received)
    await verifyByIncoming(env, await databaseFor(env, message.accountId), message);
  return true;
}

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
    log.warn("gateway_event_dropped", {
      gateway,
      session: batch.sessionId,
      reason: staleness,
      sent_at: batch.sentAt,
      skew_ms: batch.sentAt === null ? null : batch.sentAt - now,
    });
    return false;
  }
  const id = sessionUuidOf(batch.sessionId);
  if (!id) return false;
  return applyToSession(env, id, gateway, batch.events);
}
