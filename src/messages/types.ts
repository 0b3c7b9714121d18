import type { MessageRow, MessageStatus, MessageType } from "../db/schema";

export type { MessageRow, MessageStatus, MessageType };

export const MESSAGE_TYPES = [
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
