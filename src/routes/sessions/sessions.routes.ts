import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  CreatedSessionSchema,
  CreateSessionBody,
  DeletedSchema,
  GatewayHealthSchema,
  LinkUrlBody,
  LinkUrlSchema,
  LiveQuery,
  PairingCodeBody,
  PairingCodeSchema,
  QrCodeSchema,
  ReconnectedSessionSchema,
  SESSIONS_DEFAULT_LIMIT,
  SessionEnvelopeSchema,
  SessionListQuery,
  SessionListSchema,
} from "./sessions.schemas";

const tags = ["Sessions"];
const common = { tags };

export const list = createRoute({
  operationId: "listSessions",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's sessions, newest first",
  description:
    "Cursor-paged as the message list is (`limit`, `cursor`; `meta.next_cursor` leads to the next page), " +
    `${SESSIONS_DEFAULT_LIMIT} sessions a page unless \`limit\` says otherwise, in \`sessions\`.`,
  request: { query: SessionListQuery },
  responses: {
    200: json(SessionListSchema, "A page of sessions"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const create = createRoute({
  operationId: "createSession",
  ...requires("sessions:write", idempotency),
  ...common,
  method: "post",
  path: "/",
  summary: "Create a session and get its first QR code",
  description:
    "The session starts `pending`. Scan the QR code with the phone that holds the chat account; the QR rotates every `QR_ROTATE_SECONDS` and the session fails with reason `qr_timeout` after `QR_TIMEOUT_SECONDS` without a scan (its session at the gateway is then removed; a reconnect creates it again). " +
    "An account holds at most its `max_sessions` sessions (deleted ones do not count): 409 `account_limit_reached` beyond, before anything is made at the gateway. " +
    "The optional body's `gateway` chooses the session's gateway among those the deployment enables (`CHATAPP_GATEWAYS`); without it, the session is on `CHATAPP_GATEWAY`. A gateway not enabled is 422 `validation_failed` (under `errors.gateway`), and nothing is made. " +
    "A `cloud_api` session links a business number on Meta's WhatsApp Cloud API by its ids and access token (`cloud_api`): Meta reads the number at once, then, with the same token, the numbers of the WhatsApp Business Account `waba_id` (its `phone_numbers` edge), which must list `phone_number_id`; the session is then `connected` with `qr_code: null`. 422 `gateway_credentials_invalid` with Meta's message when Meta refuses the number or the token; the same naming `cloud_api.waba_id` in `errors` when Meta refuses to list the WABA's numbers to the token or the WABA does not hold the number; nothing is stored either way. 409 `phone_number_in_use` when another session holds the number. " +
    "Send an `Idempotency-Key` header to make retries safe: the first response is replayed for 24 hours.",
  request: { headers: IdempotencyKeyHeader, body: { ...jsonBody(CreateSessionBody), required: false } },
  responses: {
    201: json(CreatedSessionSchema, "The new session and its QR code"),
    ...problems(
      "unauthenticated",
      "validation_failed",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "account_limit_reached",
      "phone_number_in_use",
      "gateway_credentials_invalid",
      "gateway_rejected",
      "gateway_unavailable",
      "service_unavailable",
    ),
  },
});

export const show = createRoute({
  operationId: "getSession",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show a session",
  request: { params: IdParam },
  responses: { 200: json(SessionEnvelopeSchema, "The session"), ...problems("not_found") },
});

export const qrCode = createRoute({
  operationId: "getSessionQrCode",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/{id}/qr-code",
  summary: "Current QR code of a pending session",
  request: { params: IdParam },
  responses: {
    200: json(QrCodeSchema, "The QR code"),
    ...problems("not_found", "session_not_pending", "not_supported_by_gateway"),
  },
});

export const disconnect = createRoute({
  operationId: "disconnectSession",
  ...requires("sessions:write"),
  ...common,
  method: "patch",
  path: "/{id}/disconnect",
  summary: "Disconnect a connected session (the link to the phone is kept)",
  request: { params: IdParam },
  responses: {
    200: json(SessionEnvelopeSchema, "The disconnected session"),
    ...problems("not_found", "session_not_connected", "gateway_rejected", "gateway_unavailable"),
  },
});

export const reconnect = createRoute({
  operationId: "reconnectSession",
  ...requires("sessions:write"),
  ...common,
  method: "patch",
  path: "/{id}/reconnect",
  summary: "Reconnect a disconnected or failed session",
  description:
    "The session becomes `connected` when the gateway still holds the link to the phone, otherwise `pending` with a fresh QR code (returned as `qr_code`). A `cloud_api` session reads its number and its WABA's numbers again, as on create: 422 `gateway_credentials_invalid` (naming `cloud_api.waba_id` when the WABA no longer holds the number) when Meta refuses.",
  request: { params: IdParam },
  responses: {
    200: json(ReconnectedSessionSchema, "The reconnected or pending session"),
    ...problems(
      "not_found",
      "session_not_disconnected",
      "gateway_credentials_invalid",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const remove = createRoute({
  operationId: "deleteSession",
  ...requires("sessions:write"),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete a session permanently",
  description:
    "Unlinks the phone at the gateway, fails and refunds the session's messages that have not been sent, and deletes the session. When the gateway cannot be reached the session is kept (503 `gateway_unavailable`): try again later.",
  request: { params: IdParam },
  responses: { 200: json(DeletedSchema, "Deleted"), ...problems("not_found", "gateway_unavailable") },
});

export const pairingCode = createRoute({
  operationId: "requestPairingCode",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/{id}/pairing-code",
  summary: "Get a pairing code: link a phone by number instead of scanning the QR code",
  description:
    "For a pending session. On the phone: Linked devices → Link a device → Link with phone number instead, then enter the code. " +
    "In the sandbox, `POST /sandbox/sessions/{id}/scan` with `pairing_code` stands in for the phone.",
  request: { params: IdParam, body: jsonBody(PairingCodeBody) },
  responses: {
    200: json(PairingCodeSchema, "The pairing code"),
    ...problems(
      "not_found",
      "validation_failed",
      "session_not_pending",
      "not_supported_by_gateway",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const gatewayHealth = createRoute({
  operationId: "checkSessionGateway",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/{id}/gateway",
  summary: "Check the session against the gateway's own view of it",
  description:
    "Asks the gateway now how it sees the session, corrects the session's status if they differ (the same check runs every `GATEWAY_CHECK_SECONDS` while a session is connected), and shows the result.",
  request: { params: IdParam },
  responses: { 200: json(GatewayHealthSchema, "The gateway's view"), ...problems("not_found") },
});

export const live = createRoute({
  operationId: "watchSession",
  ...requires("sessions:read"),
  ...common,
  security: [...requires("sessions:read").security, { LinkToken: [] }],
  method: "get",
  path: "/{id}/live",
  summary: "Watch a session's changes live over a WebSocket",
  description: [
    "Upgrades to a WebSocket (`Upgrade: websocket`) that receives one JSON text frame per change of the session. Authenticate with the API key (`Authorization: Bearer …`) or, from a browser, with a link token as `?token=…` (see `POST …/link-url`); a token reaches only its own session.",
    "",
    "Frames:",
    '- `{type: "session.snapshot", session, qr_code?, expires_at?}`: first, the state now.',
    '- `{type: "session.status_changed", session, qr_code?, expires_at?}`: every status move (`qr_code` and `expires_at` when it moved to `pending`).',
    "- `{type: \"session.qr_updated\", session, qr_code, expires_at}`: a pending session's QR rotated (the `session.qr_updated` event's data, with `expires_at`).",
    '- `{type: "session.pairing_code", pairing_code, phone_number, issued_at}`: a pairing code was issued.',
    '- `{type: "session.deleted", id}`: the session was deleted; the socket then closes with code **4404**, reason `session deleted`.',
    "",
    "A socket lives no longer than the key or token that opened it. Close codes:",
    "- **4401** `key revoked` or `key expired`: the API key was revoked (`DELETE /v1/api-keys/{id}`) or reached its `expires_at`.",
    "- **4403** `link revoked`: the session's link URLs were revoked (`DELETE …/link-url`), or the API key that made the link URL was.",
    "- **4404** `session deleted`: right after the `session.deleted` frame.",
    "- **4410** `link expired`: the link token reached its `expires_at`.",
    "",
    "No frame reaches a socket whose key or token is revoked or expired: before each frame the socket is closed instead.",
    "",
    "`session` is the Session as `GET /v1/chatapp/sessions/{id}` shows it; on a socket opened with a link token it is the public view (`id`, `status`, `reason`, `phone_number` while connected, `updated_at`). `qr_code` is a PNG data URI; `expires_at` is when the next QR replaces it. A frame is sent once the change is stored. Send the text `ping` to get `pong` (answered without waking the session); anything else the client sends is ignored.",
  ].join("\n"),
  request: { params: IdParam, query: LiveQuery },
  responses: {
    101: { description: "Switching Protocols: the WebSocket of live frames" },
    ...problems("unauthenticated", "not_found", "link_not_found", "link_expired", "upgrade_required"),
  },
});

export const createLinkUrl = createRoute({
  operationId: "createLinkUrl",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/{id}/link-url",
  summary: "Make a link URL: a hosted page where the phone's owner links the session",
  description:
    "Makes a link token for this session and returns its page URL. The token is random (256 bits), stored only as its SHA-256, and valid for `expires_in` seconds; `DELETE` revokes every token of the session, and revoking the API key that made it revokes it too. With the token, `GET /link/{token}/session` shows the session's status and QR code, `POST /link/{token}/pairing-code` and `POST /link/{token}/reconnect` act on it, and `GET /v1/chatapp/sessions/{id}/live?token=…` watches it, all without an API key.",
  request: { params: IdParam, body: { ...jsonBody(LinkUrlBody), required: false } },
  responses: {
    201: json(LinkUrlSchema, "The link URL"),
    ...problems("not_found", "validation_failed", "not_supported_by_gateway"),
  },
});

export const revokeLinkUrls = createRoute({
  operationId: "revokeLinkUrls",
  ...requires("sessions:write"),
  ...common,
  method: "delete",
  path: "/{id}/link-url",
  summary: "Revoke every link URL of the session",
  description:
    "Every token of the session stops working at once: its page and live route answer 410 `link_expired`, and live sockets opened with a token are closed with code **4403**, reason `link revoked`.",
  request: { params: IdParam },
  responses: { 204: { description: "Revoked (also when there was none)" }, ...problems("not_found") },
});
