import type { MessageRow, MessageStatus, MessageType } from "../db/schema";

export type { MessageRow, MessageStatus, MessageType };

/**
 * Every message type. `template` is outgoing only: a Cloud API session's approved message
 * template (README, Message templates).
 */
export const MESSAGE_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "template",
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
