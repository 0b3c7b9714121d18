import type { GatewayKind } from "../config";
import type { OtpRow } from "../db/queries/otps";
import type { ContactRow, ErasureRow, EventRow } from "../db/schema";
import type { EventType } from "../events/catalogue";
import { qrPngDataUri } from "../lib/qr-png";
import { formatTimestamp } from "../lib/time";
import { type SessionRow, toSessionRecord } from "../sessions/session-record";
import { accountOfSnapshot, toAccountRecord } from "./account";
import { campaignRowOfSnapshot, toCampaignRecord } from "./campaign";
import { toContactRecord } from "./contact";
import { toErasureRecord } from "./erasure";
import { type MessageWithContact, toMessageRecord } from "./message";
import { toOtpRecord } from "./otp";
import { toTemplateStatusRecord } from "./template";

/**
 * An event as the API shows it and webhooks deliver it: `{ id, type, created_at, data }`, where
 * `data` is the object after the change in exactly the shape its own GET returns, rendered from
 * the stored snapshot by the same function that GET uses (src/events/catalogue.ts lists the
 * types and their `data`). `defaultGateway` (the deployment's `CHATAPP_GATEWAY`) is the
 * `gateway` of a session snapshot taken before sessions chose theirs.
 */
export function toEventRecord(row: EventRow, defaultGateway: GatewayKind) {
  return {
    id: row.id,
    // Only this service writes the table, with the catalogue's types.
    type: row.type as EventType,
    created_at: formatTimestamp(row.createdAt),
    data: dataOf(row, defaultGateway),
  };
}

export type EventRecord = ReturnType<typeof toEventRecord>;

function dataOf(row: EventRow, defaultGateway: GatewayKind): Record<string, unknown> {
  const snapshot = JSON.parse(row.snapshot) as Record<string, unknown>;
  // A reaction's, an edit's and a vote's snapshot is its `data` already (src/messages/reactions.ts,
  // src/messages/edits.ts, src/messages/poll-votes.ts).
  if (row.type === "message.reaction" || row.type === "message.edited" || row.type === "poll.voted")
    return snapshot;
  if (row.type.startsWith("message.")) return toMessageRecord(snapshot as MessageWithContact);
  if (row.type === "session.status_changed" || row.type === "session.health_changed")
    return toSessionRecord(snapshot as SessionRow, defaultGateway);
  if (row.type === "session.qr_updated") {
    const { session, qr } = snapshot as { session: SessionRow; qr: string };
    return { session: toSessionRecord(session, defaultGateway), qr_code: qrPngDataUri(qr) };
  }
  // An OTP's status as it was when the event happened.
  if (row.type.startsWith("otp.")) return toOtpRecord(snapshot as OtpRow, row.createdAt);
  if (row.type.startsWith("campaign."))
    return toCampaignRecord(campaignRowOfSnapshot(snapshot), row.createdAt);
  if (row.type.startsWith("account.")) {
    const { row: account, prices, defaultRetentionDays } = accountOfSnapshot(snapshot);
    return toAccountRecord(account, prices, defaultRetentionDays);
  }
  if (row.type === "template.status_changed") return toTemplateStatusRecord(snapshot);
  if (row.type === "contact.created") return toContactRecord(snapshot as ContactRow);
  if (row.type === "contact.updated") {
    const { contact, previous } = snapshot as { contact: ContactRow; previous: ContactRow };
    return { contact: toContactRecord(contact), previous: toContactRecord(previous) };
  }
  if (row.type === "contact.erased") return toErasureRecord(snapshot as ErasureRow);
  return snapshot;
}
