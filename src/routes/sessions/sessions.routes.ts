import { createRoute, z } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { bearerSecurity, IdParam, json, problems } from "../openapi";
import {
  CreatedSessionSchema,
  DeletedSchema,
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
    ...problems("unauthenticated", "validation_failed", "idempotency_key_in_use", "idempotency_key_reused"),
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
    ...problems("not_found", "session_not_connected"),
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
    ...problems("not_found", "session_not_disconnected"),
  },
});

export const remove = createRoute({
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete a session permanently",
  request: { params: IdParam },
  responses: { 200: json(DeletedSchema, "Deleted"), ...problems("not_found") },
});
