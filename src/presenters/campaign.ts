import type { RecipientWithMessage } from "../db/queries/campaigns";
import type { CampaignRow } from "../db/schema";
import { shownAsNumber } from "../lib/contact-identity";
import { fromMinor } from "../lib/money";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

/**
 * A campaign row as the API shows it (`Campaign` in the OpenAPI document); money in major units,
 * `eta` as of `now` (epoch ms; an event's record uses the event's time).
 */
export function toCampaignRecord(row: CampaignRow, now = Date.now()) {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    chatapp_session_ids: row.sessionIds,
    type: row.type,
    content: row.content,
    template: row.template,
    location: row.payload && "location" in row.payload ? row.payload.location : null,
    contacts: row.payload && "contacts" in row.payload ? row.payload.contacts : null,
    interactive: row.payload && "interactive" in row.payload ? row.payload.interactive : null,
    media_url: row.mediaUrl,
    delay_range: { min_ms: row.delayMinMs, max_ms: row.delayMaxMs },
    scheduled_at: formatNullableTimestamp(row.scheduledAt),
    send_window: row.sendWindow,
    check_numbers: row.checkNumbers,
    simulate_typing: row.simulateTyping,
    stats: {
      total: row.total,
      queued: row.queued,
      sent: row.sent,
      delivered: row.delivered,
      read: row.read,
      failed: row.failed,
      replied: row.replied,
      skipped: row.skipped,
    },
    cost: fromMinor(row.cost),
    refunded: fromMinor(row.refunded),
    started_at: formatNullableTimestamp(row.startedAt),
    completed_at: formatNullableTimestamp(row.completedAt),
    eta: formatNullableTimestamp(etaOf(row, now)),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * A recipient row as the API shows it (`CampaignRecipient`): its address as `to_number` (a number)
 * or `to_user_id` (a user id), the other null, as a message shows its recipient (an erased one's
 * hash, `erased:…`, as `to_number`: docs/contacts.md, Erasure); its message's
 * status once it has one.
 */
export function toRecipientRecord(row: RecipientWithMessage) {
  const byNumber = shownAsNumber(row.toNumber);
  return {
    seq: row.seq,
    to_number: byNumber ? row.toNumber : null,
    to_user_id: byNumber ? null : row.toNumber,
    variables: row.variables,
    status: row.messageStatus ?? row.status,
    reason: row.messageStatus ? row.messageReason : row.reason,
    message_id: row.messageId,
  };
}

/**
 * When a campaign's last queued message should be sent (epoch ms), or null when nothing waits or
 * it is not sending (draft, paused, finished). From the rate measured since it started once
 * messages have gone out; before that, from its pacing: each session sends every mean gap of
 * `delay_range`, the sessions side by side. An estimate: a send window or a session that drops
 * moves it.
 */
export function etaOf(row: CampaignRow, now: number): number | null {
  if ((row.status !== "running" && row.status !== "scheduled") || row.queued === 0) return null;
  const done = row.sent + row.delivered + row.read + row.failed;
  if (row.startedAt !== null && done > 0 && now > row.startedAt) {
    return Math.round(now + (row.queued * (now - row.startedAt)) / done);
  }
  const meanGap = (row.delayMinMs + row.delayMaxMs) / 2;
  const from = Math.max(now, row.scheduledAt ?? 0);
  return Math.round(from + Math.ceil(row.queued / Math.max(1, row.sessionIds.length)) * meanGap);
}

/**
 * A campaign row as an event stored it (src/db/queries/events.ts `rowJson`: the JSON columns are
 * text there), as Drizzle reads it.
 */
export function campaignRowOfSnapshot(snapshot: Record<string, unknown>): CampaignRow {
  const parsed = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);
  return {
    ...(snapshot as CampaignRow),
    sessionIds: parsed(snapshot.sessionIds),
    sendWindow: parsed(snapshot.sendWindow),
    // SQLite's json_object keeps a boolean column as its integer.
    checkNumbers: Boolean(snapshot.checkNumbers),
    simulateTyping: Boolean(snapshot.simulateTyping),
  };
}
