import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { deleteMessage as deleteSentMessage } from "../../chat-actions/delete";
import { editMessage as editSentMessage } from "../../chat-actions/edit";
import { markRead as markMessageRead } from "../../chat-actions/read";
import { readConfig } from "../../config";
import { missingRecord } from "../../db/queries/archives";
import type { ListQuery } from "../../db/queries/message-list";
import { listMessages } from "../../db/queries/message-list";
import { findMessage } from "../../db/queries/messages";
import type { MessageRow } from "../../db/schema";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { templateOwnerOf, templatesOf } from "../../gateways/cloud-api/template-cache";
import { grants, insufficientScope } from "../../keys/scopes";
import { fromMinor } from "../../lib/money";
import { toE164 } from "../../lib/phone";
import { requireMediaUrlAllowed } from "../../media/fetch";
import { servedDisposition } from "../../media/rules";
import { parseMessageMetadata } from "../../messages/metadata";
import { sendMessages } from "../../messages/send";
import { toMessageRecord, toSentRecord } from "../../presenters/message";
import { pageLinks } from "../paging";
import type * as routes from "./messages.routes";
import { SessionRef, toListQuery } from "./messages.schemas";

/**
 * A reply's `mark_read` (docs/messages.md, Chat actions): the contact's message `messageId` and the chat's
 * earlier ones are marked read before the reply is sent, as `POST /v1/chatapp/messages/{id}/read`
 * marks them. Asking for it needs `messages:write` beside the send's `messages:send`. A message
 * that is not the account's, or of another session or chat than the reply's, is left to the send,
 * which refuses it (`reply_to_not_found`, `reply_to_other_chat`) with nothing marked.
 * @throws ApiError `insufficient_scope` (403); as src/chat-actions/read.ts `markRead`
 *   (`message_not_incoming` 422, `session_not_connected` 409, `gateway_rejected` 502,
 *   `gateway_unavailable` 503).
 */
async function markRepliedRead(
  c: Context<AppEnv>,
  reply: { sessionId: string; to: string | null },
  messageId: string,
): Promise<void> {
  const { principal } = c.var;
  if (!grants(principal.scopes, "messages:write"))
    throw insufficientScope(
      "messages:write",
      "This API key lacks the `messages:write` scope `mark_read` needs.",
    );
  const quoted = await findMessage(c.var.db, principal.accountId, messageId);
  const chat = [quoted?.fromNumber, quoted?.contact?.phoneNumber, quoted?.contact?.userId];
  if (quoted?.chatappSessionId !== reply.sessionId || (reply.to !== null && !chat.includes(reply.to))) return;
  await markMessageRead(c.env, c.var.db, principal.accountId, messageId, Date.now());
}

export const send: RouteHandler<typeof routes.send, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  // The schema takes the local-development exception; the deployment decides (src/media/fetch.ts).
  requireMediaUrlAllowed(body.media_url, { allowLocalhost: readConfig(c.env).MEDIA_ALLOW_HTTP_LOCALHOST });
  // Each recipient once: numbers in E.164, then user ids as given.
  const recipients = [
    ...new Set([...(body.to_number ?? []).map((n) => toE164(n) ?? n), ...(body.to_user_id ?? [])]),
  ];
  if (body.type === "template") await freshTemplates(c, body.chatapp_session_id);
  if (body.mark_read && body.reply_to)
    await markRepliedRead(
      c,
      { sessionId: body.chatapp_session_id, to: recipients[0] ?? null },
      body.reply_to,
    );
  const { rows, price, balance } = await sendMessages(c.env, c.var.db, {
    accountId: c.var.principal.accountId,
    sessionId: body.chatapp_session_id,
    recipients,
    type: body.type,
    content: body.content ?? null,
    mediaUrl: body.media_url ?? null,
    delayBetween: body.delay_between,
    scheduledAt: body.scheduled_at ? Date.parse(body.scheduled_at) : null,
    template: body.template,
    location: body.location,
    interactive: body.interactive,
    contacts: body.contacts,
    poll: body.poll,
    simulateTyping: body.simulate_typing ?? false,
    replyTo: body.reply_to ?? null,
    reaction: body.reaction && { messageId: body.reaction.message_id, emoji: body.reaction.emoji },
  });
  const charged = rows.filter((row) => row.status !== "failed").length;
  return c.json(
    {
      success: true as const,
      message: body.scheduled_at ? "Message scheduled for sending." : "Message queued for sending.",
      data: {
        messages: rows.map(toSentRecord),
        count: rows.length,
        total_cost: fromMinor(price * charged),
        new_balance: fromMinor(balance),
        remaining_messages: Math.floor(balance / price),
      },
    },
    201,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findMessage(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row)
    throw await missingRecord(c.var.db, c.var.principal.accountId, "messages", c.req.valid("param").id);
  return c.json({ success: true as const, data: toMessageRecord(row) }, 200);
};

/** Marks an incoming message (and the chat's earlier ones) read (src/chat-actions/read.ts). */
export const markRead: RouteHandler<typeof routes.markRead, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const accountId = c.var.principal.accountId;
  const result = await markMessageRead(c.env, c.var.db, accountId, id, Date.now());
  if (!result) throw await missingRecord(c.var.db, accountId, "messages", id);
  return c.json(
    { success: true as const, data: toMessageRecord(result.message), marked: result.marked },
    200,
  );
};

/** Deletes a sent message for everyone (src/chat-actions/delete.ts). */
export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const accountId = c.var.principal.accountId;
  const row = await deleteSentMessage(c.env, c.var.db, accountId, id, Date.now());
  if (!row) throw await missingRecord(c.var.db, accountId, "messages", id);
  return c.json({ success: true as const, data: toMessageRecord(row) }, 200);
};

/** Edits a sent text (src/chat-actions/edit.ts). */
export const edit: RouteHandler<typeof routes.edit, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const accountId = c.var.principal.accountId;
  const row = await editSentMessage(c.env, c.var.db, accountId, id, c.req.valid("json").content, Date.now());
  if (!row) throw await missingRecord(c.var.db, accountId, "messages", id);
  return c.json({ success: true as const, data: toMessageRecord(row) }, 200);
};

/**
 * Streams an incoming message's kept media (src/media/incoming.ts) with its stored content type
 * and size, never sniffed (`nosniff`): `Content-Disposition: inline` for an image, audio or video
 * type, `attachment` for any other (media/rules.ts `servedDisposition`), so a document is a file,
 * never a page of this origin.
 */
export const media: RouteHandler<typeof routes.media, AppEnv> = async (c) => {
  const row = await findMessage(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row)
    throw await missingRecord(c.var.db, c.var.principal.accountId, "messages", c.req.valid("param").id);
  const object = row.direction === "incoming" && row.mediaKey ? await c.env.MEDIA.get(row.mediaKey) : null;
  if (!object) throw new ApiError("media_not_kept", notKeptDetail(row));
  const contentType = row.mediaContentType ?? object.httpMetadata?.contentType ?? "application/octet-stream";
  return c.body(object.body, 200, {
    "Content-Type": contentType,
    "Content-Length": String(object.size),
    "Content-Disposition": servedDisposition(contentType),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "private, no-store",
  });
};

/** Why message `row`'s media is not served, from its metadata. */
function notKeptDetail(row: MessageRow): string {
  if (row.direction !== "incoming") return "Only an incoming message's media is kept.";
  const metadata = parseMessageMetadata(row.metadata);
  if (metadata.media_expired_at) return "The message's media passed its retention and was deleted.";
  if (metadata.media_error)
    return "The message's media could not be downloaded; metadata.media_error says why.";
  if (row.type === "text") return "The message carries no media.";
  return "The message's media is not kept (yet).";
}

export const list: RouteHandler<typeof routes.list, AppEnv> = (c) =>
  page(c, toListQuery(c.req.valid("query")));

export const listBySession: RouteHandler<typeof routes.listBySession, AppEnv> = (c) => {
  // The path names the session; a malformed one is a bad filter (422), as `session_id` would be.
  const session = SessionRef.safeParse(c.req.valid("param").session_id);
  if (!session.success) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { session_id: session.error.issues.map((issue) => issue.message) },
    });
  }
  return page(c, toListQuery(c.req.valid("query"), session.data));
};

/** A page of the message list (see routes/paging.ts). */
async function page(c: Context<AppEnv>, query: ListQuery) {
  const { rows, more } = await listMessages(c.var.db, c.var.principal.accountId, query);
  return c.json(
    {
      success: true as const,
      data: rows.map(toMessageRecord),
      ...pageLinks(c, rows, { limit: query.limit, cursor: query.cursor, more }),
    },
    200,
  );
}

/**
 * Before a template send: the session's template cache, read again from Meta when older than
 * `TEMPLATE_CACHE_SECONDS`, so a template approved since is found. Best effort: any failure
 * (another account's session, another gateway, Meta unreachable) is left to the send's own checks,
 * which read the cache as it is.
 */
async function freshTemplates(c: Context<AppEnv>, sessionId: string): Promise<void> {
  try {
    const owner = await templateOwnerOf(c.env, c.var.db, c.var.principal.accountId, sessionId);
    await templatesOf(c.var.db, owner, { refresh: false });
  } catch {
    // The send decides on the cache as it is.
  }
}
