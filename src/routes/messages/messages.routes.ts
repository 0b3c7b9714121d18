import { createRoute, z } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { sendRateLimit } from "../../middleware/rate-limit";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  MessageEnvelopeSchema,
  MessageListQuery,
  MessageListSchema,
  SendBody,
  SendResponseSchema,
  SessionMessageListQuery,
} from "./messages.schemas";

const common = { tags: ["Messages"] };

export const send = createRoute({
  operationId: "sendMessage",
  ...requires("messages:send", sendRateLimit, idempotency),
  ...common,
  method: "post",
  path: "/",
  summary: "Send a message to one or many recipients",
  description:
    "Charges the whole send at once (402 `insufficient_balance` creates nothing, and a media send the balance cannot pay " +
    "is refused before its `media_url` is fetched), then fans the messages out through the session, " +
    "`delay_between` milliseconds apart. Send an `Idempotency-Key` header to make retries safe: the first response is replayed for 24 hours.",
  request: {
    headers: IdempotencyKeyHeader,
    body: jsonBody(SendBody),
  },
  responses: {
    201: json(SendResponseSchema, "The messages, queued (or scheduled)"),
    ...problems(
      "validation_failed",
      "not_found",
      "session_not_connected",
      "session_limited",
      "insufficient_balance",
      "media_unavailable",
      "reply_to_not_found",
      "reply_to_other_chat",
      "reaction_other_chat",
      "outside_service_window",
      "recipient_not_supported",
      "reply_to_not_sent",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "service_unavailable",
    ),
  },
});

export const list = createRoute({
  operationId: "listMessages",
  ...requires("messages:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's messages, newest first, with filters and cursor paging",
  request: { query: MessageListQuery },
  responses: { 200: json(MessageListSchema, "A page of messages"), ...problems("validation_failed") },
});

export const listBySession = createRoute({
  operationId: "listSessionMessages",
  ...requires("messages:read"),
  ...common,
  method: "get",
  path: "/{session_id}/session",
  summary: "List one session's messages (same filters and paging)",
  request: {
    params: z.object({
      session_id: z
        .string()
        .max(100)
        .openapi({
          param: { name: "session_id", in: "path" },
          description: "Session uuid or `session_<uuid>`.",
        }),
    }),
    query: SessionMessageListQuery,
  },
  responses: { 200: json(MessageListSchema, "A page of messages"), ...problems("validation_failed") },
});

export const show = createRoute({
  operationId: "getMessage",
  ...requires("messages:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show a message",
  request: { params: IdParam },
  responses: {
    200: json(MessageEnvelopeSchema, "The message"),
    ...problems("not_found", "message_archived"),
  },
});

export const media = createRoute({
  operationId: "getMessageMedia",
  ...requires("messages:read"),
  ...common,
  method: "get",
  path: "/{id}/media",
  summary: "Download an incoming message's media",
  description:
    "The media an incoming message carried, as the service keeps it (downloaded once from the gateway; README, Incoming media): " +
    "the bytes with their content type and length, `X-Content-Type-Options: nosniff`, and `Content-Disposition: inline` for an image, audio or video type " +
    "(not `image/svg+xml`), `attachment` for any other. 404 `media_not_kept` while it is not kept: not downloaded yet, its download " +
    "failed (`metadata.media_error` says why), it passed `MEDIA_RETENTION_DAYS` (`metadata.media_expired_at`), or the message has none.",
  request: { params: IdParam },
  responses: {
    200: {
      description: "The media, with its content type",
      content: { "application/octet-stream": { schema: { type: "string" as const, format: "binary" } } },
    },
    ...problems("not_found", "message_archived", "media_not_kept"),
  },
});
