import type { SendableType } from "../billing/prices";
import type { MessageRow, MessageStatus, MessageType } from "../db/schema";

export type { MessageRow, MessageStatus, MessageType, SendableType };

/**
 * The message types priced each on its own (accounts show a price per type, usage counts per
 * type): text and media; `template`, outgoing only, a Cloud API session's approved message
 * template (docs/gateways.md, Message templates); `location`, a point on the map (docs/messages.md, Sending
 * messages → Locations; lib/location.ts); `interactive`, reply buttons or a list (docs/messages.md,
 * Sending messages → Buttons and lists; lib/interactive.ts); `contacts`, contact cards (docs/messages.md,
 * Sending messages → Contact cards; lib/contact-cards.ts); `sticker`, a WebP sticker by
 * `media_url` (docs/messages.md, Sending messages → Stickers; src/media/sticker.ts); and `poll`, a question
 * with options contacts vote on, linked devices only (docs/messages.md, Sending messages → Polls;
 * lib/poll.ts).
 */
export const MESSAGE_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "template",
  "location",
  "interactive",
  "contacts",
  "sticker",
  "poll",
] as const satisfies readonly MessageType[];

/**
 * The message types campaigns send: text and media with `content` as a `{{name}}` template, a
 * `template` with `{{name}}` in its values, and a location, contact cards, reply buttons or a
 * list, or a sticker, the same for every recipient (docs/campaigns.md, Campaigns).
 */
export const CAMPAIGN_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "template",
  "location",
  "interactive",
  "contacts",
  "sticker",
] as const satisfies readonly (typeof MESSAGE_TYPES)[number][];

/**
 * The types a send takes: {@link MESSAGE_TYPES} and `reaction`, an emoji set on (or, empty, taken
 * off) another message of the chat, priced as a text (docs/messages.md, Replies and reactions).
 */
export const SENDABLE_TYPES = [...MESSAGE_TYPES, "reaction"] as const satisfies readonly SendableType[];

/**
 * Every type a message row may have: {@link SENDABLE_TYPES} and `interactive_reply`, a contact's
 * tap on a reply button or choice from a list, incoming only (lib/interactive.ts `InteractiveReply`).
 */
export const STORED_TYPES = [
  ...SENDABLE_TYPES,
  "interactive_reply",
] as const satisfies readonly MessageType[];

/** The types carried by content and media alone: incoming messages and campaigns (no templates). */
export const CONTENT_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
] as const satisfies readonly MessageType[];
export const MESSAGE_STATUSES = [
  "queued",
  "sent",
  "delivered",
  "read",
  "failed",
  "scheduled",
] as const satisfies readonly MessageStatus[];

/**
 * A message of the recipient's chat that a send quotes or reacts to: the gateway's id of it
 * (`provider_message_id`) and whether the session sent it (`fromMe`: Evolution API's message key
 * needs it; docs/messages.md, Replies and reactions).
 */
export interface QuotedMessage {
  providerMessageId: string;
  fromMe: boolean;
}
