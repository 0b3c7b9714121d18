import type { SendWindow } from "../lib/send-window";
import { type MessageMetadata, parseMessageMetadata } from "./metadata";
import type { MessageRow, MessageType, QuotedMessage } from "./types";
import { typingMs } from "./typing";

/**
 * Dispatch lanes, lower first (docs/otp.md, Sending and verifying; docs/campaigns.md, Campaigns): one-time
 * codes, then single sends, then bulk campaign traffic, so a campaign never holds up a transactional message.
 */
export const LANE = { otp: 0, send: 1, campaign: 2 } as const;
export type Lane = (typeof LANE)[keyof typeof LANE];

/**
 * One recipient's message on the outbound Queue: everything the session object needs to send
 * it, so the fan-out reads nothing back from D1.
 */
export interface DispatchRequest {
  id: string;
  accountId: string;
  sessionId: string;
  to: string;
  type: MessageType;
  /**
   * The text or caption to send; for a `template` message, the JSON of its `TemplateSend`
   * (messages/template.ts: name, language, variables), read from the row's `metadata.template`;
   * for a `location`, the JSON of its `metadata.location` (lib/location.ts `Location`); for an
   * `interactive`, the JSON of its `metadata.interactive` (lib/interactive.ts `Interactive`); for
   * `contacts`, the JSON of its `metadata.contacts` (lib/contact-cards.ts `ContactCard[]`); for a
   * `poll`, the JSON of its `metadata.poll` (lib/poll.ts `Poll`).
   */
  content: string | null;
  /** The caller's `media_url` (a document's file name comes from it); never fetched by the gateway. */
  mediaUrl: string | null;
  /** The stored copy of the media the gateway is given: its key in the `MEDIA` R2 bucket, or null. */
  mediaKey: string | null;
  /** The stored copy's content type, or null. */
  mediaContentType: string | null;
  /** Milliseconds the session waits after its previous gateway call before sending this one. */
  delayBetween: number;
  /** Creation time (epoch ms), then `sendRef`, then `sendIndex`: the order of acceptance. */
  acceptedAt: number;
  /** Identifies the send request (its charge's ledger id): keeps concurrent sends apart. */
  sendRef: string;
  sendIndex: number;
  /** Epoch ms before which it must not be sent (`scheduled_at`), or null. */
  notBefore: number | null;
  /** Dispatch lane ({@link LANE}); lower goes first. */
  priority: Lane;
  /** The campaign it belongs to (it can be paused, cancelled or moved with it), or null. */
  campaignId: string | null;
  /** The campaign's send window: outside it the message waits. Null for any time. */
  sendWindow: SendWindow | null;
  /**
   * How long the recipient sees "typing…" before it (ms, typing.ts `typingMs`), or 0 for none
   * (`simulate_typing` false). Absent in queue messages sent before it existed: none.
   */
  typingMs?: number;
  /**
   * The message it quotes, or a reaction's message, as the gateway knows it (the row's
   * `metadata.quoted`, send.ts); absent or null for neither (queue messages from before replies).
   */
  quoted?: QuotedMessage | null;
}

/**
 * The columns of a message row that {@link dispatchRequestOf} reads: what a query building queue
 * messages must select (campaign failover's `RETURNING` names exactly these).
 */
export type DispatchSource = Pick<
  MessageRow,
  | "id"
  | "accountId"
  | "chatappSessionId"
  | "campaignId"
  | "toNumber"
  | "type"
  | "content"
  | "mediaUrl"
  | "mediaKey"
  | "mediaContentType"
  | "delayBetween"
  | "createdAt"
  | "chargeId"
  | "sendIndex"
  | "scheduledAt"
  | "simulateTyping"
  | "metadata"
>;

/**
 * Builds the queue message of a created message row, in lane `priority`. `content` replaces the
 * row's (a one-time code's message carries its code here only; the row holds it masked); a
 * campaign's message carries its campaign's `sendWindow`.
 */
export function dispatchRequestOf(
  row: DispatchSource,
  priority: Lane,
  options: { content?: string | null; sendWindow?: SendWindow | null } = {},
): DispatchRequest {
  const metadata = parseMessageMetadata(row.metadata);
  return {
    id: row.id,
    accountId: row.accountId,
    sessionId: row.chatappSessionId ?? "",
    to: row.toNumber,
    type: row.type,
    content: options.content === undefined ? contentOf(row, metadata) : options.content,
    mediaUrl: row.mediaUrl,
    mediaKey: row.mediaKey,
    mediaContentType: row.mediaContentType,
    delayBetween: row.delayBetween,
    acceptedAt: row.createdAt,
    sendRef: row.chargeId ?? row.id,
    sendIndex: row.sendIndex,
    notBefore: row.scheduledAt,
    priority,
    campaignId: row.campaignId,
    sendWindow: options.sendWindow ?? null,
    typingMs: row.simulateTyping ? typingMs(row.type, row.content) : 0,
    quoted: quotedOf(metadata),
  };
}

/**
 * The quoted message a row's `metadata.quoted` holds (`{ provider_message_id, from_me }`, written
 * by send.ts), or null.
 */
function quotedOf(metadata: MessageMetadata): QuotedMessage | null {
  const quoted = metadata.quoted;
  return quoted ? { providerMessageId: quoted.provider_message_id, fromMe: quoted.from_me } : null;
}

/**
 * What a row's queue message carries as `content`: a template message's template, a location
 * message's location, an interactive message's buttons or list, a contacts message's cards or a
 * poll's question and options (the JSON of its `metadata.template`, `metadata.location`,
 * `metadata.interactive`, `metadata.contacts` or `metadata.poll`, written at the
 * send: src/messages/send.ts, src/campaigns/materialise.ts), else its content.
 */
function contentOf(row: DispatchSource, metadata: MessageMetadata): string | null {
  const payload =
    row.type === "template"
      ? metadata.template
      : row.type === "location"
        ? metadata.location
        : row.type === "interactive"
          ? metadata.interactive
          : row.type === "contacts"
            ? metadata.contacts
            : row.type === "poll"
              ? metadata.poll
              : undefined;
  return payload ? JSON.stringify(payload) : row.content;
}
