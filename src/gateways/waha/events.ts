import { z } from "zod";
import { contactCardsLabel } from "../../lib/contact-cards";
import type { ContactIdentity } from "../../lib/contact-identity";
import { hmacHex, timingSafeEqual } from "../../lib/crypto";
import { locationLabel } from "../../lib/location";
import { cardOfVcard } from "../../lib/vcard";
import type { GatewayEvent, GatewayEventBatch, OutboundMessage } from "../gateway";
import { lidOfJid, phoneOfJid } from "../jid";
import { wahaLocation } from "./location";
import { Me, SessionStatus, statusEvent } from "./session";

/*
 * WAHA's webhook calls, as its docs describe them (https://waha.devlike.pro/docs/how-to/events/):
 * checking their signature and normalising them into our GatewayEvents. The subscription itself
 * (events, HMAC key, retries) is made with the session (link.ts).
 */

/** Webhook envelope ("Events → Event Payload → Structure"): `timestamp` is in epoch milliseconds. */
const Envelope = z.looseObject({
  timestamp: z.number(),
  session: z.string().min(1),
  event: z.string().min(1),
  payload: z.unknown(),
  me: Me.nullish(),
});

/** `session.status` payload: `{ status, statuses }` ("Events → session.status"). */
const StatusPayload = z.looseObject({ status: SessionStatus });

/** `message.ack` payload: `{ id, ack, ackName, … }` ("Events → message.ack"). */
const AckPayload = z.looseObject({ id: z.string().min(1), ack: z.number().int() });

/**
 * The sender's name in a message's `_data` ("internal engine data, can be different for each
 * engine", "Events → message"): NOWEB's `_data.pushName` (WAHA's docs, "NOWEB → Get messages",
 * devlikeapro/waha-docs content/docs/engines/noweb/index.md, whose `_data` examples carry `key` and
 * `pushName`). Another engine's `_data`, or one of another shape, gives no name.
 */
const RawData = z
  .looseObject({ pushName: z.string().min(1).nullish() })
  .nullish()
  .catch(null);

/** `message` payload ("Events → message", "Receive messages → Media Files"). */
const MessagePayload = z.looseObject({
  id: z.string().min(1),
  from: z.string(),
  _data: RawData,
  fromMe: z.boolean(),
  body: z.string().nullish(),
  hasMedia: z.boolean().nullish(),
  media: z.looseObject({ url: z.string().nullish(), mimetype: z.string().nullish() }).nullish(),
  /** The message quoted (`ReplyToMessage`: `id` is the message's own id, without chat or `fromMe`). */
  replyTo: z.looseObject({ id: z.string().min(1) }).nullish(),
  /** A location message's point and place (`WALocation`, location.ts); null when it is none. */
  location: z.unknown().transform(wahaLocation).optional(),
  /** `vCards`: "List of vCards contained in the message" (a contact message's cards). */
  vCards: z.array(z.string()).nullish().catch(null),
});

/** `message.reaction` payload (`WAMessageReaction`): the reactor's chat and `reaction: { text, messageId }`. */
const ReactionPayload = z.looseObject({
  from: z.string(),
  fromMe: z.boolean(),
  reaction: z.looseObject({ text: z.string(), messageId: z.string().min(1) }),
});

/**
 * `message.edited` payload (`WAMessageEditedBody`, WAHA's OpenAPI document, devlikeapro/waha-docs
 * static/swagger/openapi.json): the edit itself as a `WAMessage` (`id` is the edit's own id, not
 * the edited message's), `from` its chat, `fromMe`, `body` the new text, and `editedMessageId`, the
 * edited message's own id "in format `{messageId}`, without `chatId`" ("Events → message.edited").
 */
const EditedPayload = z.looseObject({
  from: z.string(),
  fromMe: z.boolean(),
  body: z.string(),
  editedMessageId: z.string().min(1),
});

/**
 * `message.revoked` payload (`WAMessageRevokedBody`): `after`, the revoke itself as a `WAMessage`
 * (its `from` and `fromMe` say whose chat and who), `revokedMessageId`, the deleted message's own
 * id without chat, and `before` ("null in most cases", unread) ("Events → message.revoked").
 */
const RevokedPayload = z.looseObject({
  revokedMessageId: z.string().min(1),
  after: z.looseObject({ from: z.string(), fromMe: z.boolean() }),
});

/**
 * `poll.vote` payload (`PollVotePayload`, WAHA's OpenAPI document, devlikeapro/waha-docs
 * static/swagger/openapi.json; "Polls → Events → poll.vote", content/docs/how-to/polls/index.md
 * there): `vote` (`PollVote`: `id`, the vote message's own id, `from` the voter's chat, `fromMe`,
 * `selectedOptions` "all the selected values at a certain moment", `timestamp`, "in seconds, but it
 * may be changed to milliseconds in the future") and `poll` (`MessageDestination`: `id`, the poll's
 * serialised id as its send answered it, and `fromMe`, true for a poll the session sent).
 */
const PollVotePayload = z.looseObject({
  vote: z.looseObject({
    from: z.string(),
    fromMe: z.boolean(),
    selectedOptions: z.array(z.string()),
    timestamp: z.unknown(),
  }),
  poll: z.looseObject({ id: z.string().min(1), fromMe: z.boolean() }),
});

/**
 * True when `signature` (the `X-Webhook-Hmac` header, sent with `X-Webhook-Hmac-Algorithm: sha512`)
 * is the hex HMAC-SHA512 of the raw request body under `key` ("Events → HMAC authentication"), in
 * any letter case. Compared in constant time; a missing or malformed signature is false.
 */
export async function verifyWahaSignature(
  rawBody: string,
  signature: string | null | undefined,
  key: string,
): Promise<boolean> {
  if (!signature) return false;
  return timingSafeEqual(await hmacHex("SHA-512", key, rawBody), signature.toLowerCase());
}

/**
 * Normalises one WAHA webhook call ("Events"). The envelope is `{ id, timestamp (epoch ms), event,
 * session, me?, payload, … }`; `sessionId` is its `session`, and `sentAt` and every event's `at`
 * its `timestamp`.
 *
 * - `session.status`: SCAN_QR_CODE → `qr` (no payload: fetch it with `currentQr`); WORKING →
 *   `linked` with the envelope's `me` (none without a phone number there); FAILED → `failed`
 *   `gateway_failed`; STOPPED → `dropped` `gateway_stopped`, not logged out; STARTING → none.
 * - `message.ack`: ack -1 ERROR → `failed` (`gateway_ack_error`), 1 SERVER → `sent`, 2 DEVICE →
 *   `delivered`, 3 READ and 4 PLAYED → `read`; 0 PENDING → none. The id is the `{fromMe}_{chatId}_{id}`
 *   form that `send` answers.
 * - `message` not `fromMe` from a user (`@c.us` or `@lid`; groups, broadcasts, channels are
 *   skipped) → `incoming` from {@link senderOf}: a `location` when its `location` (`WALocation`)
 *   is a point on the map (location.ts `wahaLocation`), its name (else its address) as content and
 *   the point, as numbers, with its name, address and url as `payload.location`; `contacts` when
 *   its `vCards` hold cards (each read by lib/vcard.ts `cardOfVcard`), their names as content and
 *   the cards as `payload.contacts`; else, a location
 *   without readable coordinates included, as any other message: text unless `hasMedia`, then by
 *   `media.mimetype` image/video/audio, else document; the body (caption for media). Never a
 *   `mediaUrl`: WAHA's `media.url` points at WAHA itself (`/api/files/…`, behind its API key), so
 *   media is noted as `media: { mimetype, ref }` instead, `ref` the file's path
 *   ({@link wahaFileRef}) when WAHA downloaded it.
 *   A reply's `replyTo.id` (the quoted message's own id, without chat or sender) gives the
 *   event's `quotedIds`: the two serialised ids it may have in this chat, `false_<from>_<id>`
 *   (theirs) and `true_<from>_<id>` (ours, as `send` stores it).
 * - `message.reaction` not `fromMe` from a phone number → `reaction` on `reaction.messageId` (the
 *   serialised id) with `reaction.text` as the emoji ("" when taken off), at the envelope's time.
 *   A reaction from a `@lid` chat is skipped: the event names its contact by number, and
 *   `WAMessageReaction` carries none for a LID.
 * - `message.edited` not `fromMe` from a user ({@link senderOf}) → `edited` of the message
 *   `false_<from>_<editedMessageId>` (its serialised id as the `message` event gave it: the
 *   contact's own message in that chat) with `body` as the new text, at the envelope's time.
 * - `message.revoked` whose `after` is not `fromMe`, from a user → `revoked` of
 *   `false_<after.from>_<revokedMessageId>`, at the envelope's time.
 * - `poll.vote` on a poll of ours (`poll.fromMe`), not `fromMe`, from a user ({@link senderOf}) →
 *   `poll_vote` on `poll.id` (its serialised id; a bare id, as GOWS names messages, becomes
 *   `true_<vote.from>_<id>`) by the voter's number, else their LID, with `selectedOptions` (all the
 *   options they now pick; [] when they took their vote back), at the vote's `timestamp` (seconds,
 *   or milliseconds from 10^12 up, as the docs warn it may become; else the envelope's time).
 *   `poll.vote.failed` (a vote WAHA could not decrypt, with `selectedOptions` [] whatever was
 *   picked) → nothing: it would read as a vote taken back.
 * - Any other event: a batch without events.
 *
 * Answers null for a body that is not a WAHA envelope, or a known event whose payload lacks the
 * fields above.
 */
export function parseWahaEvent(body: unknown): GatewayEventBatch | null {
  const envelope = Envelope.safeParse(body);
  if (!envelope.success) return null;
  const { session: sessionId, event, payload, me, timestamp: at } = envelope.data;
  const events = eventsOf(event, payload, me, at);
  return events && { sessionId, events, sentAt: at };
}

function eventsOf(
  event: string,
  payload: unknown,
  me: Me | null | undefined,
  at: number,
): GatewayEvent[] | null {
  switch (event) {
    case "session.status": {
      const parsed = StatusPayload.safeParse(payload);
      return parsed.success ? present(statusEvent(parsed.data.status, me, at)) : null;
    }
    case "message.ack": {
      const parsed = AckPayload.safeParse(payload);
      if (!parsed.success) return null;
      const status = ACK_STATUS.get(parsed.data.ack);
      if (!status) return [];
      const reason = status === "failed" ? "gateway_ack_error" : null;
      return [{ type: "ack", providerMessageId: parsed.data.id, status, reason, at }];
    }
    case "message": {
      const parsed = MessagePayload.safeParse(payload);
      if (!parsed.success) return null;
      const message = parsed.data;
      const from = senderOf(message.from, message._data?.pushName);
      if (message.fromMe || !from) return [];
      // `media.url` is on WAHA's own host, which callers must not see (and may not reach): the
      // message keeps only that it had media, and of which type; the file's path is the `ref`
      // the session object downloads it by, from WAHA_URL with the API key (index.ts).
      const ref = wahaFileRef(message.media?.url);
      const media = message.hasMedia
        ? { media: { mimetype: message.media?.mimetype ?? null, ...(ref ? { ref } : {}) } }
        : {};
      const location = message.location;
      const cards = (message.vCards ?? []).flatMap((vcard) => cardOfVcard(vcard) ?? []);
      const kind = location
        ? { messageType: "location" as const, content: locationLabel(location), payload: { location } }
        : cards.length > 0
          ? {
              messageType: "contacts" as const,
              content: contactCardsLabel(cards),
              payload: { contacts: cards },
            }
          : {
              messageType: message.hasMedia ? mediaType(message.media?.mimetype) : ("text" as const),
              content: message.body || null,
              ...media,
            };
      return [
        {
          type: "incoming",
          providerMessageId: message.id,
          from,
          ...kind,
          mediaUrl: null,
          // The quoted message is of this chat, ours or theirs: its serialised id is one of these.
          ...(message.replyTo
            ? {
                quotedIds: [
                  `false_${message.from}_${message.replyTo.id}`,
                  `true_${message.from}_${message.replyTo.id}`,
                ],
              }
            : {}),
          at,
        },
      ];
    }
    case "message.reaction": {
      const parsed = ReactionPayload.safeParse(payload);
      if (!parsed.success) return null;
      const { from: chat, fromMe, reaction } = parsed.data;
      // `GatewayEvent` `reaction` names its contact by number: one from a `@lid` chat, whose payload
      // gives no number (`WAMessageReaction`), stays skipped.
      const from = phoneOfJid(chat);
      if (fromMe || !from) return [];
      return [{ type: "reaction", providerMessageId: reaction.messageId, from, emoji: reaction.text, at }];
    }
    case "message.edited": {
      const parsed = EditedPayload.safeParse(payload);
      if (!parsed.success) return null;
      const { from: chat, fromMe, body, editedMessageId } = parsed.data;
      const from = senderOf(chat, null);
      if (fromMe || !from) return [];
      return [
        { type: "edited", providerMessageId: `false_${chat}_${editedMessageId}`, from, content: body, at },
      ];
    }
    case "message.revoked": {
      const parsed = RevokedPayload.safeParse(payload);
      if (!parsed.success) return null;
      const { after, revokedMessageId } = parsed.data;
      const from = senderOf(after.from, null);
      if (after.fromMe || !from) return [];
      return [{ type: "revoked", providerMessageId: `false_${after.from}_${revokedMessageId}`, from, at }];
    }
    case "poll.vote": {
      const parsed = PollVotePayload.safeParse(payload);
      if (!parsed.success) return null;
      const { vote, poll } = parsed.data;
      const voter = senderOf(vote.from, null);
      const from = voter?.phoneNumber ?? voter?.userId;
      if (vote.fromMe || !poll.fromMe || !from) return [];
      const stamp = typeof vote.timestamp === "number" && vote.timestamp > 0 ? vote.timestamp : null;
      return [
        {
          type: "poll_vote",
          providerMessageId: poll.id.includes("_") ? poll.id : `true_${vote.from}_${poll.id}`,
          from,
          options: vote.selectedOptions,
          at: stamp === null ? at : stamp < 1e12 ? stamp * 1000 : stamp,
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * Who wrote a direct message from chat `chat`, with `name` (NOWEB's `_data.pushName`) when given:
 * `<digits>@c.us` → its number (E.164); `<digits>@lid` → the LID as `userId` ("Receive messages →
 * chatId, from, to, participant": "a hidden user ID"), without a number: WAHA's `message` payload
 * (`WAMessage`, its OpenAPI document, devlikeapro/waha-docs static/swagger/openapi.json) has no
 * field for the number behind a LID (asked for in devlikeapro/waha#993), which the session learns
 * afterwards through `GET /api/{session}/lids/{lid}` (lids.ts). Null for any other chat (groups
 * `@g.us`, `status@broadcast`, channels `@newsletter`).
 */
export function senderOf(chat: string, name: string | null | undefined): ContactIdentity | null {
  const named = name ? { name } : {};
  const phoneNumber = phoneOfJid(chat);
  if (phoneNumber) return { phoneNumber, ...named };
  const userId = lidOfJid(chat);
  return userId ? { userId, ...named } : null;
}

/** `message.ack` `ack` values ("Events → message.ack"); 0 PENDING has no status. */
const ACK_STATUS = new Map<number, "sent" | "delivered" | "read" | "failed">([
  [-1, "failed"],
  [1, "sent"],
  [2, "delivered"],
  [3, "read"],
  [4, "read"],
]);

/**
 * The path (and query) of WAHA's `media.url` when it is one of WAHA's files (`/api/files/…`,
 * "Receive messages → Media Files"), else null. Only the path is kept: the file is fetched from
 * WAHA_URL, never from the host the URL names (WAHA_BASE_URL may name another, and a forged
 * host must not receive the API key).
 */
export function wahaFileRef(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.pathname.startsWith("/api/files/") ? `${parsed.pathname}${parsed.search}` : null;
  } catch {
    return null;
  }
}

/** The message type of incoming media by its mimetype; anything else is a document. */
function mediaType(mimetype: string | null | undefined): OutboundMessage["type"] {
  const kind = mimetype?.split("/")[0];
  return kind === "image" || kind === "video" || kind === "audio" ? kind : "document";
}

function present(event: GatewayEvent | null): GatewayEvent[] {
  return event ? [event] : [];
}
