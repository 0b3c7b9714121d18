import { type Interactive, interactiveOf } from "../../lib/interactive";
import { GatewayError, type OutboundMessage } from "../gateway";

/*
 * Interactive messages (docs/messages.md, Sending messages → Buttons and lists) through WAHA. Sources: WAHA's
 * OpenAPI document (2026.7.1, devlikeapro/waha-docs static/swagger/openapi.json): `POST
 * /api/sendList` with `SendListRequest` `{ session, chatId, message: SendListMessage, reply_to? }`,
 * and its docs "Send messages → Send List" and "→ Send Buttons" with the engines' table
 * (content/docs/how-to/send-messages/index.md and features.md there).
 *
 * WAHA sends lists alone. Reply buttons are `POST /api/sendButtons`, which the document marks
 * `deprecated` and the docs "DEPRECATED - Buttons do not work at the moment!", listed for no engine
 * in the engines' table: they are refused before any charge (lib/gateway-kinds.ts
 * `sendsInteractive`). Lists are sent by NOWEB and GOWS only ("`POST /api/sendList`", engines'
 * table), in WAHA Plus (changelog 2025.8.2), and "can only be sent to direct chats (1:1)".
 *
 * A contact's choice is not read: neither the document nor the docs say how it arrives in the
 * `message` webhook (`WAMessage` has no field for it; `_data` is the engine's raw data, "may be
 * changed anytime"), so it is stored as events.ts reads any message, never as an
 * `interactive_reply`.
 */

/** A list: the one kind of {@link Interactive} WAHA sends. */
export type InteractiveList = Extract<Interactive, { type: "list" }>;

/**
 * The interactive message an `interactive` message carries (its content, the JSON of a
 * lib/interactive.ts `Interactive`), or null when the content is not one.
 */
export function readInteractive(content: string | null): Interactive | null {
  try {
    return interactiveOf(content);
  } catch {
    return null;
  }
}

/**
 * The body of `POST /api/sendList` beside `session` and `chatId` (`SendListRequest`): `message`,
 * the list as {@link listMessageOf} writes it, and for a reply `reply_to`, the quoted message's
 * serialised id ("The ID of the message to reply to - false_11111111111@c.us_AAAAAAAAAAAAAAAAAAAA").
 * `SendListRequest` has no `id` ("Pre-generated message id", which `MessageTextRequest`,
 * `MessageLocationRequest` and `MessageContactVcardRequest` have): the list is sent under an id of
 * WAHA's choosing, and lookup.ts cannot find it by ours.
 */
export function listBody(message: OutboundMessage, list: InteractiveList): Record<string, unknown> {
  return {
    message: listMessageOf(list),
    ...(message.replyTo ? { reply_to: message.replyTo.providerMessageId } : {}),
  };
}

/**
 * `SendListMessage` of `list`: `{ title, description, footer?, button, sections: [{ title, rows:
 * [{ title, rowId, description? }] }] }`. `title`, `button` and `sections` are required, so the
 * header's text is `title` ("" without one: the document sets no minimum length); the body is
 * `description`; the footer's text is `footer`, left out without one; `action.button` is `button`.
 * `Section` requires `title`, so an untitled section (Meta allows one in a list of one section)
 * sends ""; each row's `id` is `rowId`, and its `description` is left out without one (`Row`
 * requires `title` and `rowId` alone, and `description` is a string, so not null). Meta's limits
 * (lib/interactive.ts) already hold; the document sets none of its own.
 */
export function listMessageOf(list: InteractiveList): {
  title: string;
  description: string;
  footer?: string;
  button: string;
  sections: { title: string; rows: { title: string; rowId: string; description?: string }[] }[];
} {
  return {
    title: list.header?.text ?? "",
    description: list.body.text,
    ...(list.footer ? { footer: list.footer.text } : {}),
    button: list.action.button,
    sections: list.action.sections.map((section) => ({
      title: section.title ?? "",
      rows: section.rows.map((row) => ({
        title: row.title,
        rowId: row.id,
        ...(row.description ? { description: row.description } : {}),
      })),
    })),
  };
}

/**
 * Whether a send failed as WAHA fails a method the session's engine does not implement: HTTP 501
 * "Not Implemented" (`{ statusCode: 501, error: "Not Implemented", message: "The method is not
 * implemented by '<ENGINE>' engine…" }`, as devlikeapro/waha#2069 shows it), which a list on WEBJS
 * or WPP gets. The server did not act on the request (RFC 9110 §15.6.2): the message was not sent,
 * and sending it again to that engine changes nothing.
 */
export function notImplementedByEngine(error: unknown): boolean {
  return error instanceof GatewayError && error.status === 501;
}
