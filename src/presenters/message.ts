import type { ContactRow, MessageRow } from "../db/schema";
import { shownAsNumber } from "../lib/contact-identity";
import { fromMinor } from "../lib/money";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";
import { parseMessageMetadata } from "../messages/metadata";
import { contactOfAddress, toContactRef } from "./contact";

/** A message row with its contact's row, as the message reads join them (null: none known). */
export type MessageWithContact = MessageRow & { contact?: ContactRow | null };

/**
 * A message as the API shows it (the `Message` schema of openapi.json): every field, `to_number`
 * one string (null for an outgoing message sent to a user id; the hash of an erased contact's
 * address, `erased:…`, as stored), `metadata` as stored
 * (src/messages/metadata.ts `parseMessageMetadata`), `contact` the contact's identifiers
 * (src/presenters/contact.ts), or, where the service keeps no contact for the message, the
 * address it went to or came from with `id` null.
 */
export function toMessageRecord(row: MessageWithContact) {
  return {
    id: row.id,
    chatapp_session_id: row.chatappSessionId,
    campaign_id: row.campaignId,
    otp_id: row.otpId,
    provider_message_id: row.providerMessageId,
    from_number: row.fromNumber,
    // An outgoing message's `to_number` column holds its address: a user id is not a number (an
    // erased address, which stands for either, is shown: docs/contacts.md, Erasure).
    to_number: row.direction === "outgoing" && !shownAsNumber(row.toNumber) ? null : row.toNumber,
    contact: row.contact
      ? toContactRef(row.contact)
      : contactOfAddress(row.direction === "outgoing" ? row.toNumber : row.fromNumber),
    type: row.type,
    content: row.content,
    // Event snapshots taken before the column existed lack it.
    reply_to: row.replyTo ?? null,
    media_url: row.mediaUrl,
    status: row.status,
    direction: row.direction,
    reason: row.reason,
    cost: fromMinor(row.cost),
    sent_at: formatNullableTimestamp(row.sentAt),
    delivered_at: formatNullableTimestamp(row.deliveredAt),
    read_at: formatNullableTimestamp(row.readAt),
    metadata: parseMessageMetadata(row.metadata),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * The fields of a record in the send response (`data.messages` of the 201 of
 * `POST /v1/chatapp/messages` in openapi.json).
 */
export function toSentRecord(row: MessageRow) {
  const r = toMessageRecord(row);
  return {
    id: r.id,
    chatapp_session_id: r.chatapp_session_id,
    campaign_id: r.campaign_id,
    from_number: r.from_number,
    to_number: r.to_number,
    type: r.type,
    content: r.content,
    reply_to: r.reply_to,
    media_url: r.media_url,
    status: r.status,
    direction: r.direction,
    cost: r.cost,
    sent_at: r.sent_at,
    delivered_at: r.delivered_at,
    read_at: r.read_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
