import { createRoute, z } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { sendRateLimit } from "../../middleware/rate-limit";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  EditBody,
  MarkReadResponseSchema,
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
      "type_not_supported_by_gateway",
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

export const markRead = createRoute({
  operationId: "markMessageRead",
  ...requires("messages:write", idempotency),
  ...common,
  method: "post",
  path: "/{id}/read",
  summary: "Mark an incoming message read at the gateway",
  description:
    "Sends the contact a read receipt (the blue ticks) for this incoming message through its session, which must be " +
    "`connected`, and with it for the chat's earlier messages, as WhatsApp does (docs/messages.md, Chat actions). Every incoming " +
    "message of the chat up to this one that is still `delivered` becomes `read` with `read_at`. Asking again is " +
    "safe: the receipt goes out again, which changes nothing on the network, and no message moves twice; " +
    "`marked` then counts 0. 422 `message_not_incoming` for a message the session sent; 502 `gateway_rejected` or " +
    "503 `gateway_unavailable` when the gateway refused or could not be reached (nothing is marked).",
  request: { params: IdParam, headers: IdempotencyKeyHeader },
  responses: {
    200: json(MarkReadResponseSchema, "The message, marked read"),
    ...problems(
      "not_found",
      "message_archived",
      "message_not_incoming",
      "session_not_connected",
      "gateway_rejected",
      "gateway_unavailable",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
  },
});

export const remove = createRoute({
  operationId: "deleteMessage",
  ...requires("messages:write", idempotency),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete a sent message for everyone",
  description:
    "Deletes one of the session's sent messages from the recipient's phone, as WhatsApp's \"Delete for everyone\" does, " +
    "through its `connected` session, within 48 hours of `sent_at` (WhatsApp allows about two days; past it, 409 " +
    "`message_too_old`). The message keeps its content here and gets `metadata.deleted_at` and a `message.deleted` event " +
    "(docs/messages.md, Chat actions). Asking again is safe: a deleted message answers as it is, with no second call or event. " +
    "422 `message_not_outgoing` for a contact's message; 409 `message_not_sent` for one not on the network yet; 409 " +
    "`not_supported_by_gateway` on the Cloud API, which cannot delete; 502 `gateway_rejected` or 503 " +
    "`gateway_unavailable` when the gateway refused or could not be reached (nothing is recorded).",
  request: { params: IdParam, headers: IdempotencyKeyHeader },
  responses: {
    200: json(MessageEnvelopeSchema, "The message, deleted for everyone"),
    ...problems(
      "not_found",
      "message_archived",
      "message_not_outgoing",
      "message_not_sent",
      "message_too_old",
      "not_supported_by_gateway",
      "session_not_connected",
      "gateway_rejected",
      "gateway_unavailable",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
  },
});

export const edit = createRoute({
  operationId: "updateMessage",
  ...requires("messages:write", idempotency),
  ...common,
  method: "patch",
  path: "/{id}",
  summary: "Edit a sent text",
  description:
    "Replaces the text of one of the session's sent `text` messages on the recipient's phone (shown \"Edited\"), through " +
    "its `connected` session, within 15 minutes of `sent_at` (WhatsApp's edit window; past it, 409 `message_too_old`). " +
    "The message's `content` becomes the new text; `metadata.edits` keeps each text it replaced, `metadata.edited_at` " +
    "the last edit's time, and each edit records a `message.edited` event (docs/messages.md, Chat actions). The same text again " +
    "answers the message as it is, with no call or event. 422 `message_not_editable` for another type or a deleted " +
    "message; other errors as `DELETE` on the message.",
  request: { params: IdParam, headers: IdempotencyKeyHeader, body: jsonBody(EditBody) },
  responses: {
    200: json(MessageEnvelopeSchema, "The message, edited"),
    ...problems(
      "validation_failed",
      "not_found",
      "message_archived",
      "message_not_outgoing",
      "message_not_sent",
      "message_not_editable",
      "message_too_old",
      "not_supported_by_gateway",
      "session_not_connected",
      "gateway_rejected",
      "gateway_unavailable",
      "idempotency_key_in_use",
      "idempotency_key_reused",
    ),
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
    "The media an incoming message carried, as the service keeps it (downloaded once from the gateway; docs/messages.md, Incoming media): " +
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
