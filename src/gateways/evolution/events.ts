import { z } from "zod";
import { type ContactIdentity, LID_PATTERN } from "../../lib/contact-identity";
import { hmacSha256Hex, timingSafeEqual } from "../../lib/crypto";
import type { AckStatus, GatewayEvent, GatewayEventBatch } from "../gateway";
import { phoneOfJid } from "../jid";
import {
  contentOf,
  MEDIA_TYPES,
  type PollUpdate,
  quotedIdOf,
  type Upserted,
  UpsertedMessage,
} from "./content";

/*
 * Evolution API's webhook bodies: authenticating them by the instance token and normalising them
 * into our GatewayEvents. Sources, by path in EvolutionAPI/evolution-api:
 * src/api/integrations/event/webhook/webhook.controller.ts (`emit`), fed by
 * `ChannelStartupService.sendDataWebhook` (src/api/services/channel.service.ts) with the event
 * names of src/api/types/wa.types.ts (`Events`); the data shapes of the Baileys channel
 * (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts). The subscription itself is
 * made with the instance (link.ts).
 */

/**
 * The token we give instance `instance` at create (link.ts): lower-case hex HMAC-SHA256 of the instance
 * name keyed with the global API key. Evolution stores a given `token` as is (`createInstance`)
 * and puts it in every webhook body's `apikey`, so the events route can recompute it.
 */
export async function evolutionInstanceToken(apiKey: string, instance: string): Promise<string> {
  return hmacSha256Hex(apiKey, instance);
}

/**
 * True when `body` is an object whose string `apikey` is the token of its string `instance`
 * ({@link evolutionInstanceToken}), compared in constant time. Evolution sends the instance's
 * token there (`sendDataWebhook`: `apiKey: expose ? this.token : null`) only when the server runs
 * with `AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES=true`; otherwise `apikey` is null and no body
 * verifies.
 */
export async function verifyEvolutionEvent(body: unknown, apiKey: string): Promise<boolean> {
  if (typeof body !== "object" || body === null) return false;
  const { instance, apikey } = body as { instance?: unknown; apikey?: unknown };
  if (typeof instance !== "string" || typeof apikey !== "string") return false;
  return timingSafeEqual(apikey, await evolutionInstanceToken(apiKey, instance));
}

/** A webhook body (`WebhookController.emit`); `event` is the `Events` value, e.g. `connection.update`. */
const Envelope = z.object({
  event: z.string(),
  instance: z.string().min(1),
  data: z.unknown(),
  /** ISO 8601; Evolution writes the server's local time with a `Z` suffix (UTC on a UTC host). */
  date_time: z.string().nullish(),
  /** The instance's own JID (`wuid`) once linked. */
  sender: z.string().nullish(),
});

/**
 * Normalises one webhook body into events for session `instance`, or null when it is not an
 * Evolution webhook envelope. Event names are accepted as sent (`connection.update`) or in the
 * config spelling (`CONNECTION_UPDATE`). `sentAt` is `date_time` in epoch ms (null when absent or
 * unreadable); `at` is the same (now when absent), an incoming message's its `messageTimestamp`
 * (seconds). Events of other names, and data of a shape not described here, yield no events.
 *
 * - `connection.update` (`connectionUpdate` in the Baileys channel) `{ state, statusReason, wuid,
 *   profileName }`: `open` → `linked` (phone of `wuid`, else `sender`); `close` with Baileys
 *   `DisconnectReason` 401 (loggedOut) → `dropped` `logged_out` (logged out), 403 (forbidden) →
 *   `banned` `account_banned`, other codes → `dropped` `connection_closed`; `refused` (QR limit
 *   reached) → `failed` `qr_limit_reached`; `connecting` → nothing.
 * - `qrcode.updated` `{ qrcode: { code } }` → `qr`.
 * - `messages.update` `{ keyId, fromMe, status }` (one object per update; arrays accepted):
 *   `SERVER_ACK` → sent, `DELIVERY_ACK` → delivered, `READ`/`PLAYED` → read, `ERROR` → failed;
 *   `PENDING`, `DELETED` and updates of messages not sent by us → nothing. One that carries a
 *   contact's edit (`message.editedMessage.message`) → `edited` ({@link editEvents}).
 * - `messages.delete` `{ remoteJid, fromMe, id, …, status: "DELETED" }` of a contact's deletion
 *   for everyone → `revoked` ({@link revokeEvents}).
 * - `messages.edited` (not subscribed, link.ts) → nothing: its data is the edit's
 *   `protocolMessage` as the contact's phone wrote it, whose key is the message as its sender sees
 *   it (`fromMe: true`, `remoteJid` the instance's own JID), so it does not say who edited.
 * - `messages.upsert` (`prepareMessage`) `{ key: { id, remoteJid, fromMe, … }, pushName,
 *   messageType, message, messageTimestamp }` not from us, in a chat with one person (a phone JID
 *   or a `@lid`; not a group, broadcast or newsletter) → `incoming` from {@link senderOf} (the
 *   number and the LID the key gives, and `pushName` as the name): `conversation`/`extendedTextMessage` → text; image, video, audio, document and sticker
 *   messages → that type with the caption and `message.mediaUrl` (set when Evolution stores media
 *   in S3), and `media: { mimetype: null, ref: <key.id> }` to download it by; a reply's
 *   `contextInfo.stanzaId` (the quoted message's id) in `quotedIds`; `locationMessage` and
 *   `liveLocationMessage` → `location` with `payload: { location }` ((content.ts `receivedLocation`)), its
 *   name (else its address, else null) as content (lib/location.ts `locationLabel`), no media;
 *   `contactMessage` and `contactsArrayMessage` → `contacts` with `payload: { contacts }` (each
 *   vCard read by lib/vcard.ts `cardOfVcard`), their names as content, no media;
 *   a contact's tap on reply buttons or choice from a list → `interactive_reply` ((content.ts `tapOf`)),
 *   the button's or row's title as content, `payload: { interactive_reply }`, and the tapped
 *   message's id in `quotedIds` ((content.ts `quotedIdOf`)).
 *   `messageType: "reactionMessage"`
 *   → `reaction` on `message.reactionMessage.key.id` with its `text` ("" when taken off), at its
 *   `senderTimestampMs` (else `messageTimestamp`), when the key gives the contact's number (a
 *   reaction names its contact by number alone). `messageType: "pollUpdateMessage"`, a vote on a
 *   poll Evolution decrypted → `poll_vote` ({@link pollVoteEvents}). Other message types → nothing.
 */
export function parseEvolutionEvent(body: unknown): GatewayEventBatch | null {
  const envelope = Envelope.safeParse(body);
  if (!envelope.success) return null;
  const { event, instance, data, date_time, sender } = envelope.data;
  const stamped = date_time ? Date.parse(date_time) : Number.NaN;
  const sentAt = Number.isNaN(stamped) ? null : stamped;
  const at = sentAt ?? Date.now();
  const batch = (events: GatewayEvent[]) => ({ sessionId: instance, events, sentAt });
  switch (event.toLowerCase().replaceAll("_", ".")) {
    case "connection.update":
      return batch(connectionEvents(data, at, sender ?? null));
    case "qrcode.updated":
      return batch(qrEvents(data, at));
    case "messages.update":
      return batch([...ackEvents(data, at), ...editEvents(data, at)]);
    case "messages.delete":
      return batch(revokeEvents(data, at));
    case "messages.upsert":
      return batch(incomingEvents(data, at));
    default:
      return batch([]);
  }
}

const ConnectionData = z.object({
  state: z.string(),
  statusReason: z.number().nullish(),
  wuid: z.string().nullish(),
  profileName: z.string().nullish(),
});

function connectionEvents(data: unknown, at: number, sender: string | null): GatewayEvent[] {
  const parsed = ConnectionData.safeParse(data);
  if (!parsed.success) return [];
  const { state, statusReason, wuid, profileName } = parsed.data;
  switch (state) {
    case "open": {
      const phoneNumber = phoneOfJid(wuid ?? sender ?? "");
      return phoneNumber ? [{ type: "linked", phoneNumber, displayName: profileName ?? null, at }] : [];
    }
    case "close":
      if (statusReason === 401) return [{ type: "dropped", reason: "logged_out", loggedOut: true, at }];
      if (statusReason === 403) return [{ type: "banned", reason: "account_banned", at }];
      return [{ type: "dropped", reason: "connection_closed", loggedOut: false, at }];
    case "refused":
      return [{ type: "failed", reason: "qr_limit_reached", at }];
    default:
      return [];
  }
}

const QrData = z.object({ qrcode: z.object({ code: z.string().min(1) }) });

function qrEvents(data: unknown, at: number): GatewayEvent[] {
  const parsed = QrData.safeParse(data);
  return parsed.success ? [{ type: "qr", qr: parsed.data.qrcode.code, at }] : [];
}

/** Evolution's message status (`wa.StatusMessage`) → our ack status; absent ones yield no ack. */
const ACK_STATUS = new Map<string, AckStatus>([
  ["SERVER_ACK", "sent"],
  ["DELIVERY_ACK", "delivered"],
  ["READ", "read"],
  ["PLAYED", "read"],
  ["ERROR", "failed"],
]);

const MessageUpdate = z.object({
  keyId: z.string().min(1).optional(),
  key: z.object({ id: z.string().min(1), fromMe: z.boolean().optional() }).optional(),
  fromMe: z.boolean().optional(),
  status: z.string(),
});

function ackEvents(data: unknown, at: number): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  for (const item of Array.isArray(data) ? data : [data]) {
    const parsed = MessageUpdate.safeParse(item);
    if (!parsed.success) continue;
    const { keyId, key, fromMe, status } = parsed.data;
    const providerMessageId = keyId ?? key?.id;
    const ack = ACK_STATUS.get(status);
    if (!providerMessageId || !ack || (fromMe ?? key?.fromMe) === false) continue;
    events.push({
      type: "ack",
      providerMessageId,
      status: ack,
      reason: ack === "failed" ? "gateway_ack_error" : null,
      at,
    });
  }
  return events;
}

/**
 * A `messages.update` item that carries an edit: Baileys' `processMessage`
 * (Baileys' process-message.ts, https://github.com/WhiskeySockets/Baileys,
 * `ProtocolMessage.Type.MESSAGE_EDIT`) emits its own `messages.update`
 * for a received edit, `{ key: { ...<the edit's key>, id: <edited message's id> }, update: {
 * message: { editedMessage: { message: <the new content> } }, messageTimestamp } }`: the key of
 * the edit as we received it (`remoteJid` the contact's chat, `fromMe: false` for the contact's),
 * with the edited message's id. Evolution's `messages.update` handler
 * (whatsapp.baileys.service.ts) sends it as `{ keyId, remoteJid, fromMe, participant, status:
 * "SERVER_ACK" (no status given), message, … }`, without the time. The new content is a
 * `conversation`, an `extendedTextMessage`'s `text`, or a media message's `caption`.
 */
const EditUpdate = z.object({
  keyId: z.string().min(1),
  remoteJid: z.string(),
  fromMe: z.boolean(),
  message: z.object({
    editedMessage: z.object({
      message: z.object({
        conversation: z.string().nullish(),
        extendedTextMessage: z.object({ text: z.string().nullish() }).nullish(),
        imageMessage: z.object({ caption: z.string().nullish() }).nullish(),
        videoMessage: z.object({ caption: z.string().nullish() }).nullish(),
        documentMessage: z.object({ caption: z.string().nullish() }).nullish(),
      }),
    }),
  }),
});

/**
 * The contacts' edits among `messages.update` items ({@link EditUpdate}): `edited` of message
 * `keyId` by the contact of `remoteJid` ({@link senderOf}: a phone JID or a `@lid`; a group's or
 * a broadcast's → nothing) with the new content, at `at` (the webhook's `date_time`: the update
 * carries no time of its own). The session's own edits (`fromMe: true`) and items without new
 * content → nothing.
 */
function editEvents(data: unknown, at: number): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  for (const item of Array.isArray(data) ? data : [data]) {
    const parsed = EditUpdate.safeParse(item);
    if (!parsed.success || parsed.data.fromMe) continue;
    const { keyId, remoteJid, message } = parsed.data;
    const edited = message.editedMessage.message;
    const content =
      edited.conversation ??
      edited.extendedTextMessage?.text ??
      edited.imageMessage?.caption ??
      edited.videoMessage?.caption ??
      edited.documentMessage?.caption;
    const from = senderOf({ id: keyId, remoteJid, fromMe: false }, null);
    if (typeof content !== "string" || !from) continue;
    events.push({ type: "edited", providerMessageId: keyId, from, content, at });
  }
  return events;
}

/**
 * `messages.delete` data of a deletion for everyone: Baileys' `processMessage`
 * (`ProtocolMessage.Type.REVOKE`) emits `messages.update` `{ key: { ...<the revoke's key>, id:
 * <deleted message's id> }, update: { message: null, … } }`, the key as we received the revoke
 * (`remoteJid` the contact's chat, `remoteJidAlt` its other JID when given, `fromMe: false` for
 * the contact's); Evolution's `messages.update` handler sends it as `{ ...key, status: "DELETED" }`
 * (whatsapp.baileys.service.ts). Its `deleteMessage` sends another shape for the session's own
 * deletes through the API (`{ id, key, … }`, no `remoteJid` at the top), which this does not read.
 */
const DeletedKey = UpsertedMessage.shape.key;

/**
 * The contacts' deletions for everyone in `messages.delete` data (one object; arrays accepted):
 * `revoked` of message `id` by the contact of the key ({@link senderOf}), at `at` (the webhook's
 * `date_time`). The session's own (`fromMe: true`), other chats' and other shapes → nothing.
 */
function revokeEvents(data: unknown, at: number): GatewayEvent[] {
  const events: GatewayEvent[] = [];
  for (const item of Array.isArray(data) ? data : [data]) {
    const parsed = DeletedKey.safeParse(item);
    if (!parsed.success || parsed.data.fromMe) continue;
    const from = senderOf(parsed.data, null);
    if (from) events.push({ type: "revoked", providerMessageId: parsed.data.id, from, at });
  }
  return events;
}

function incomingEvents(data: unknown, at: number): GatewayEvent[] {
  const parsed = UpsertedMessage.safeParse(data);
  if (!parsed.success || parsed.data.key.fromMe) return [];
  const { key, messageTimestamp, message, contextInfo } = parsed.data;
  const from = senderOf(key, parsed.data.pushName);
  if (!from) return [];
  const seconds = Number(messageTimestamp ?? Number.NaN);
  if (parsed.data.messageType === "pollUpdateMessage")
    return pollVoteEvents(
      message?.pollUpdateMessage,
      from,
      Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
    );
  const reaction = parsed.data.messageType === "reactionMessage" ? message?.reactionMessage : null;
  if (reaction) {
    // A `reaction` event names its contact by E.164 number (GatewayEvent `reaction`): a reaction
    // from a `@lid` chat whose key gives no number is skipped, as it was before LIDs were read.
    if (!from.phoneNumber) return [];
    // Baileys stamps a reaction in milliseconds; the message's own stamp is in seconds.
    const ms = Number(reaction.senderTimestampMs ?? Number.NaN);
    return [
      {
        type: "reaction",
        providerMessageId: reaction.key.id,
        from: from.phoneNumber,
        emoji: reaction.text ?? "",
        at:
          Number.isFinite(ms) && ms > 0 ? ms : Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
      },
    ];
  }
  const content = contentOf(parsed.data);
  if (!content) return [];
  const withMedia = MEDIA_TYPES.has(content.messageType);
  const quoted = quotedIdOf(parsed.data) ?? contextInfo?.stanzaId;
  return [
    {
      type: "incoming",
      providerMessageId: key.id,
      from,
      ...content,
      mediaUrl: withMedia ? (message?.mediaUrl ?? null) : null,
      // Media is downloaded by the message's id (index.ts `openIncomingMedia`).
      ...(withMedia ? { media: { mimetype: null, ref: key.id } } : {}),
      ...(quoted ? { quotedIds: [quoted] } : {}),
      at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : at,
    },
  ];
}

/**
 * A contact's vote (`messageType: "pollUpdateMessage"`, {@link PollUpdate}) as a `poll_vote` on
 * the poll `pollCreationMessageKey.id` names, by the voter's number, else their LID, at its
 * `senderTimestampMs` (else `at`, the message's own time). Only a vote Evolution decrypted names
 * its options (`vote.selectedOptions`, strings): one it could not decrypt (the poll or its secret
 * not in its store) names none, and is dropped. An empty selection is dropped too: Evolution gives
 * the same `[]` for a vote it could not decrypt with the poll at hand and for a vote taken back, so
 * on Evolution API a vote taken back leaves the last one standing (docs/messages.md, Sending
 * messages → Polls). `messages.update` with `pollUpdates` (the votes Baileys itself aggregated) is not read:
 * it carries no time to order votes by, and the same vote arrives by `messages.upsert`.
 */
function pollVoteEvents(
  update: z.output<typeof PollUpdate> | undefined,
  from: ContactIdentity,
  at: number,
): GatewayEvent[] {
  const voter = from.phoneNumber ?? from.userId;
  const selected = update?.vote?.selectedOptions ?? [];
  const options = selected.filter((option): option is string => typeof option === "string");
  if (!update || !voter || options.length === 0 || options.length !== selected.length) return [];
  const ms = Number(update.senderTimestampMs ?? Number.NaN);
  return [
    {
      type: "poll_vote",
      providerMessageId: update.pollCreationMessageKey.id,
      from: voter,
      options,
      at: Number.isFinite(ms) && ms > 0 ? ms : at,
    },
  ];
}

/** A LID JID (`<digits>@lid`) without a device suffix (`createJid` drops `:<device>`), or null. */
function lidOfJid(jid: string): string | null {
  const bare = jid.replace(/:\d+(?=@lid$)/, "");
  return LID_PATTERN.test(bare) ? bare : null;
}

/**
 * Who wrote a message of a one-person chat, from its Baileys key (docs/contacts.md, Contacts): the E.164
 * number and the LID (`<digits>@lid`) found among `remoteJid`, `remoteJidAlt`, `senderPn` and
 * `previousRemoteJid`, and `pushName` as the name; null when `remoteJid` is not one person's
 * (a group, a broadcast list, a newsletter). A `@lid` chat without its number gives the LID
 * alone; it is never dropped for it.
 *
 * The key's shapes, by path in evolution-foundation/evolution-api
 * (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts, `messages.upsert` of
 * `messageHandle` and `prepareMessage`, which sends the key as Baileys gives it, typed by
 * `ExtendedIMessageKey`), by release tag:
 * - 2.3.1–2.3.4: a `@lid` key with `senderPn` has `remoteJid` replaced by `senderPn` and the LID
 *   kept in `previousRemoteJid`; 2.3.3–2.3.4 then also replace a `@lid` `remoteJid` by
 *   `remoteJidAlt` just before the webhook (the LID is then lost);
 * - 2.3.5–2.3.6: the key as Baileys 7 gives it: `remoteJid` the chat (`@lid` or phone),
 *   `remoteJidAlt` the other JID when the network gave it, `addressingMode` `lid` or `pn`;
 * - 2.3.7: a `@lid` `remoteJid` is replaced by its `remoteJidAlt` before the webhook;
 * - 2.4.0-rc1/rc2: a `@lid` `remoteJid` with a `remoteJidAlt` is swapped with it (the phone JID
 *   in `remoteJid`, the LID in `remoteJidAlt`, `addressingMode: "pn"`).
 */
function senderOf(key: Upserted["key"], pushName: string | null | undefined): ContactIdentity | null {
  if (!phoneOfJid(key.remoteJid) && !lidOfJid(key.remoteJid)) return null;
  const jids = [key.remoteJid, key.remoteJidAlt, key.senderPn, key.previousRemoteJid].filter(
    (jid): jid is string => typeof jid === "string",
  );
  const phoneNumber = jids.map(phoneOfJid).find((phone) => phone !== null);
  const userId = jids.map(lidOfJid).find((lid) => lid !== null);
  const name = pushName?.trim();
  return {
    ...(phoneNumber ? { phoneNumber } : {}),
    ...(userId ? { userId } : {}),
    ...(name ? { name } : {}),
  };
}
