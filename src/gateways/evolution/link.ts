import { z } from "zod";
import type { GatewaySettings } from "../../config";
import { GatewayError, type GatewayEvent, type LinkState } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { digitsOf, phoneOfJid } from "../jid";
import { errorMessages, statusOf } from "./errors";
import { evolutionInstanceToken } from "./events";

/*
 * An Evolution API instance's lifecycle: create (with its token and webhook), connect (QR and
 * pairing code), logout, delete, and reading its connection state. Sources, by path in
 * EvolutionAPI/evolution-api: src/api/routes/instance.router.ts (routes), src/api/dto/instance.dto.ts
 * (bodies), src/api/controllers/instance.controller.ts (create, connect, connectionState, logout,
 * delete), src/api/services/monitor.service.ts (`instanceInfo`: fetchInstances answers the Prisma
 * `Instance` rows); the instance guard answers 404 for an instance it does not know
 * (src/api/guards/instance.guard.ts). The instance is named after our session (`session_<uuid>`).
 */

/**
 * Events the instance webhook subscribes to, by their webhook-config names (wa.types.ts; parsed by
 * events.ts). `MESSAGES_EDITED` is left out: a contact's edit comes as a `MESSAGES_UPDATE` (events.ts
 * `editEvents`), and its `protocolMessage` does not say who edited.
 */
const WEBHOOK_EVENTS = [
  "CONNECTION_UPDATE",
  "QRCODE_UPDATED",
  "MESSAGES_UPSERT",
  "MESSAGES_UPDATE",
  "MESSAGES_DELETE",
];

/** `POST /instance/create` → `{ instance, hash, webhook, settings, qrcode }`; `qrcode` is `wa.QrCode`. */
const CreatedInstance = z.object({
  instance: z.object({ instanceName: z.string() }),
  qrcode: z.object({ code: z.string().nullish() }).nullish(),
});
/** `GET /instance/connect/{instance}` → `wa.QrCode` `{ pairingCode, code, base64, count }`, or the state when open. */
const ConnectAnswer = z.object({ code: z.string().nullish(), pairingCode: z.string().nullish() });
/** `GET /instance/connectionState/{instance}` → `{ instance: { instanceName, state } }`. */
const ConnectionState = z.object({ instance: z.object({ state: z.string().nullish() }) });
/** `GET /instance/fetchInstances?instanceName=` → Prisma `Instance` rows. */
const InstanceRows = z
  .array(z.object({ ownerJid: z.string().nullish(), profileName: z.string().nullish() }))
  .min(1);

/**
 * What create needs besides the HTTP API: the global API key (which keys the instance token) and
 * the public URL the webhook points at (`<publicUrl>/gateway/evolution/events`).
 */
export type InstanceTarget = Pick<Extract<GatewaySettings, { kind: "evolution" }>, "apiKey" | "publicUrl">;

/**
 * `POST /instance/create` with our token ({@link evolutionInstanceToken}) and the webhook (nested
 * `webhook` of `InstanceDto`; `EventManager.setInstance` enables it). The answer's `qrcode.code` is
 * the first QR, read after a 5 s wait on the server; without it the QR comes from `connect`. An
 * instance already of that name (403 from the instance guard, e.g. a retried create) is started
 * instead ({@link startInstance}).
 * @throws GatewayError for a failed call, or as {@link currentQr}.
 */
export async function createInstance(
  http: GatewayHttp,
  sessionId: string,
  target: InstanceTarget,
): Promise<LinkState> {
  let created: z.output<typeof CreatedInstance>;
  try {
    created = await gatewayRequest(http, {
      method: "POST",
      path: "/instance/create",
      body: {
        instanceName: sessionId,
        token: await evolutionInstanceToken(target.apiKey, sessionId),
        qrcode: true,
        integration: "WHATSAPP-BAILEYS",
        webhook: {
          url: `${target.publicUrl}/gateway/evolution/events`,
          byEvents: false,
          base64: false,
          events: WEBHOOK_EVENTS,
        },
      },
      schema: CreatedInstance,
    });
  } catch (error) {
    if (statusOf(error) === 403) return startInstance(http, sessionId);
    throw error;
  }
  const qr = created.qrcode?.code;
  return { status: "pending", qr: qr ? qr : await currentQr(http, sessionId) };
}

/**
 * `connectionState`: `open` → connected (owner from `fetchInstances`); otherwise the QR of
 * `connect` ({@link currentQr}).
 * @throws GatewayError for a failed call, an open instance without an owner number
 *   (`gateway_bad_response`), or as {@link currentQr}.
 */
export async function startInstance(http: GatewayHttp, sessionId: string): Promise<LinkState> {
  if ((await connectionState(http, sessionId)) === "open")
    return { status: "connected", ...(await owner(http, sessionId)) };
  return { status: "pending", qr: await currentQr(http, sessionId) };
}

/**
 * `GET /instance/connect/{instance}` → `code`, the QR payload. Connecting a `close` instance
 * starts it; a `connecting` one answers its current QR.
 * @throws GatewayError transient `gateway_qr_unavailable` when the answer has no QR yet (or the
 *   instance is already open), or for a failed call.
 */
export async function currentQr(http: GatewayHttp, sessionId: string): Promise<string> {
  const answer = await gatewayRequest(http, {
    method: "GET",
    path: `/instance/connect/${sessionId}`,
    schema: ConnectAnswer,
  });
  if (!answer.code) throw new GatewayError("gateway_qr_unavailable", false, null, sessionId);
  return answer.code;
}

/**
 * `GET /instance/connect/{instance}?number=<digits>` → `pairingCode`, for `phoneNumber` (E.164).
 * Evolution asks Baileys for the code only when this call starts a `close` instance with the
 * number (the client keeps the number and requests a code with each QR); a `connecting` instance
 * started without it answers its QR with `pairingCode: null`. Baileys answers the code as 8
 * characters; the phone shows it as two groups of four, so that is how it is returned
 * (`ABCD-EFGH`).
 * @throws GatewayError permanent `gateway_pairing_code_unavailable` when the answer has no code
 *   (asking again cannot help while the instance waits for a QR scan), or for a failed call.
 */
export async function requestPairingCode(
  http: GatewayHttp,
  sessionId: string,
  phoneNumber: string,
): Promise<string> {
  const answer = await gatewayRequest(http, {
    method: "GET",
    path: `/instance/connect/${sessionId}?number=${digitsOf(phoneNumber)}`,
    schema: ConnectAnswer,
  });
  const code = answer.pairingCode;
  if (!code) throw new GatewayError("gateway_pairing_code_unavailable", true, null, sessionId);
  return /^[A-Z0-9]{8}$/i.test(code) ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}

/**
 * `DELETE /instance/logout/{instance}`. Evolution has no close-but-keep-the-link call, so this
 * unlinks the phone: a later start needs a new QR. An instance already closed (400 "is not
 * connected") or gone (404) counts as disconnected.
 * @throws GatewayError for any other failure.
 */
export async function logoutInstance(http: GatewayHttp, sessionId: string): Promise<void> {
  try {
    await gatewayRequest(http, { method: "DELETE", path: `/instance/logout/${sessionId}` });
  } catch (error) {
    if (statusOf(error) === 404) return;
    const messages = statusOf(error) === 400 ? errorMessages(error) : [];
    if (messages.some((item) => typeof item === "string" && /not connected/i.test(item))) return;
    throw error;
  }
}

/**
 * `DELETE /instance/delete/{instance}`; 404 means already gone. Evolution refuses to delete an
 * `open` instance (400 "needs to be disconnected"), so a 400 logs out first
 * ({@link logoutInstance}) and deletes again.
 * @throws GatewayError for any other failure.
 */
export async function deleteInstance(http: GatewayHttp, sessionId: string): Promise<void> {
  const path = `/instance/delete/${sessionId}`;
  try {
    await gatewayRequest(http, { method: "DELETE", path });
  } catch (error) {
    if (statusOf(error) === 404) return;
    if (statusOf(error) !== 400) throw error;
    await logoutInstance(http, sessionId);
    await gatewayRequest(http, { method: "DELETE", path }).catch((again: unknown) => {
      if (statusOf(again) !== 404) throw again;
    });
  }
}

/**
 * `connectionState`: `open` → `linked` (owner from `fetchInstances`); `close` → `dropped`
 * (`gateway_closed`); `refused` (QR limit reached) → `failed` (`qr_limit_reached`); an unknown
 * instance (404) → `dropped` (`gateway_session_missing`, logged out). `connecting` is null:
 * Baileys is then either showing a QR or re-connecting a linked phone, which this call cannot
 * tell apart, and the `qrcode.updated` / `connection.update` webhooks say which. `at` is now
 * (epoch ms).
 * @throws GatewayError for any other failure, or an open instance without an owner number.
 */
export async function checkInstance(http: GatewayHttp, sessionId: string): Promise<GatewayEvent | null> {
  let state: string | null;
  try {
    state = await connectionState(http, sessionId);
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
    return { type: "dropped", reason: "gateway_session_missing", loggedOut: true, at: Date.now() };
  }
  switch (state) {
    case "open":
      return { type: "linked", ...(await owner(http, sessionId)), at: Date.now() };
    case "close":
      return { type: "dropped", reason: "gateway_closed", loggedOut: false, at: Date.now() };
    case "refused":
      return { type: "failed", reason: "qr_limit_reached", at: Date.now() };
    default:
      return null;
  }
}

async function connectionState(http: GatewayHttp, sessionId: string): Promise<string | null> {
  const answer = await gatewayRequest(http, {
    method: "GET",
    path: `/instance/connectionState/${sessionId}`,
    schema: ConnectionState,
  });
  return answer.instance.state ?? null;
}

/** The linked phone: `ownerJid` and `profileName` of the instance row. */
async function owner(
  http: GatewayHttp,
  sessionId: string,
): Promise<{ phoneNumber: string; displayName: string | null }> {
  const [row] = await gatewayRequest(http, {
    method: "GET",
    path: `/instance/fetchInstances?instanceName=${sessionId}`,
    schema: InstanceRows,
  });
  const phoneNumber = row?.ownerJid ? phoneOfJid(row.ownerJid) : null;
  if (!phoneNumber)
    throw new GatewayError("gateway_bad_response", false, null, "instance has no owner number");
  return { phoneNumber, displayName: row?.profileName ?? null };
}
