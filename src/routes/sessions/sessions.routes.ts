import { createRoute, z } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { bearerSecurity, IdParam, json, jsonBody, problems } from "../openapi";
import {
  CreatedSessionSchema,
  DeletedSchema,
  GatewayHealthSchema,
  PairingCodeBody,
  PairingCodeSchema,
  QrCodeSchema,
  ReconnectedSessionSchema,
  SessionEnvelopeSchema,
  SessionListSchema,
} from "./sessions.schemas";

const tags = ["Sessions"];
const common = { tags, security: bearerSecurity };

export const list = createRoute({
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's sessions, newest first",
  responses: { 200: json(SessionListSchema, "The sessions"), ...problems("unauthenticated") },
});

export const create = createRoute({
  ...common,
  method: "post",
  path: "/",
  summary: "Create a session and get its first QR code",
  description:
    "The session starts `pending`. Scan the QR code with the phone that holds the chat account; the QR rotates every `QR_ROTATE_SECONDS` and the session fails with reason `qr_timeout` after `QR_TIMEOUT_SECONDS` without a scan. " +
    "Send an `Idempotency-Key` header to make retries safe: the first response is replayed for 24 hours.",
  middleware: [idempotency] as const,
  request: { headers: z.object({ "idempotency-key": z.string().optional() }) },
  responses: {
    201: json(CreatedSessionSchema, "The new session and its QR code"),
    ...problems(
      "unauthenticated",
      "validation_failed",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const show = createRoute({
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show a session",
  request: { params: IdParam },
  responses: { 200: json(SessionEnvelopeSchema, "The session"), ...problems("not_found") },
});

export const qrCode = createRoute({
  ...common,
  method: "get",
  path: "/{id}/qr-code",
  summary: "Current QR code of a pending session",
  request: { params: IdParam },
  responses: { 200: json(QrCodeSchema, "The QR code"), ...problems("not_found", "session_not_pending") },
});

export const disconnect = createRoute({
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
  ...common,
  method: "patch",
  path: "/{id}/reconnect",
  summary: "Reconnect a disconnected or failed session",
  description:
    "The session becomes `connected` when the gateway still holds the link to the phone, otherwise `pending` with a fresh QR code (returned as `qr_code`).",
  request: { params: IdParam },
  responses: {
    200: json(ReconnectedSessionSchema, "The reconnected or pending session"),
    ...problems("not_found", "session_not_disconnected", "gateway_rejected", "gateway_unavailable"),
  },
});

export const remove = createRoute({
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
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const gatewayHealth = createRoute({
  ...common,
  method: "get",
  path: "/{id}/gateway",
  summary: "Check the session against the gateway's own view of it",
  description:
    "Asks the gateway now how it sees the session, corrects the session's status if they differ (the same check runs every `GATEWAY_CHECK_SECONDS` while a session is connected), and shows the result.",
  request: { params: IdParam },
  responses: { 200: json(GatewayHealthSchema, "The gateway's view"), ...problems("not_found") },
});
