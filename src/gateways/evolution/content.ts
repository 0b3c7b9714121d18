import { z } from "zod";
import { contactCardsLabel } from "../../lib/contact-cards";
import type { InteractiveReply } from "../../lib/interactive";
import { type Location, LocationSchema, locationLabel, MAX_LOCATION_TEXT } from "../../lib/location";
import type { MessagePayload } from "../../lib/message-payload";
import { cardOfVcard } from "../../lib/vcard";
import type { MessageType } from "../../messages/types";

/*
 * What Evolution API's Baileys channel gives of a message's content (WAProto.proto of
 * WhiskeySockets/Baileys, as `prepareMessage` passes it on in `messages.upsert` and
 * `/chat/findMessages`), read into our message types: texts, media, locations, contact cards,
 * taps on buttons and lists, polls and what we sent of them (lookup.ts matches those). Shared by
 * the webhook parser (events.ts) and the lookup (lookup.ts).
 */

const Caption = z.object({ caption: z.string().nullish() }).nullish();

/**
 * Baileys' `LocationMessage` (WAProto.proto of WhiskeySockets/Baileys: `degreesLatitude`,
 * `degreesLongitude` (doubles), `name`, `address`, `url`, …) or `LiveLocationMessage` (the same
 * point, without `name`, `address` or `url`), as `prepareMessage` passes it on. Every field is
 * optional in the proto and read so here: {@link receivedLocation} decides what makes a point, so
 * one odd message cannot spoil a `findMessages` page that holds it (lookup.ts).
 */
const LocationMessage = z
  .object({
    degreesLatitude: z.number().nullish(),
    degreesLongitude: z.number().nullish(),
    name: z.string().nullish(),
    address: z.string().nullish(),
    url: z.string().nullish(),
  })
  .nullish()
  .catch(null);
/**
 * The `ContextInfo` of a message's content (WAProto.proto of WhiskeySockets/Baileys), as far as it
 * is read here: a reply's `stanzaId`, the id of the message it answers (for a tap, the message
 * whose button or list it was).
 */
const ContentContext = z.object({ stanzaId: z.string().nullish() }).nullish().catch(null);

/**
 * The messages a contact's tap makes (WAProto.proto of WhiskeySockets/Baileys, `Message`), every
 * field optional as in the proto and read so (`.catch(null)`: one odd message cannot spoil a
 * `findMessages` page): `ButtonsResponseMessage` (a legacy `buttonsMessage`'s button:
 * `selectedButtonId`, `selectedDisplayText`), `TemplateButtonReplyMessage` (a template's button:
 * `selectedId`, `selectedDisplayText`), `ListResponseMessage` (a legacy `listMessage`'s row:
 * `title`, `description`, `singleSelectReply.selectedRowId`) and `InteractiveResponseMessage`
 * (a native-flow `interactiveMessage`'s button: `body.text`, `nativeFlowResponseMessage { name,
 * paramsJson }`), each with its `contextInfo`.
 */
const ButtonsResponse = z
  .object({
    selectedButtonId: z.string().nullish(),
    selectedDisplayText: z.string().nullish(),
    contextInfo: ContentContext,
  })
  .nullish()
  .catch(null);
const TemplateButtonReply = z
  .object({
    selectedId: z.string().nullish(),
    selectedDisplayText: z.string().nullish(),
    contextInfo: ContentContext,
  })
  .nullish()
  .catch(null);
const ListResponse = z
  .object({
    title: z.string().nullish(),
    description: z.string().nullish(),
    singleSelectReply: z.object({ selectedRowId: z.string().nullish() }).nullish(),
    contextInfo: ContentContext,
  })
  .nullish()
  .catch(null);
const InteractiveResponse = z
  .object({
    body: z.object({ text: z.string().nullish() }).nullish(),
    nativeFlowResponseMessage: z
      .object({ name: z.string().nullish(), paramsJson: z.string().nullish() })
      .nullish(),
    contextInfo: ContentContext,
  })
  .nullish()
  .catch(null);

/**
 * What the Baileys channel stores of reply buttons we sent (`buttonMessage`: an
 * `interactiveMessage` whose `body.text` it wrote, with `footer` and a `nativeFlowMessage` of
 * `quick_reply` buttons, each `buttonParamsJson` the JSON of `{ display_text, id }`) and of a list
 * (`listMessage`: the legacy `listMessage` with `title`, `description`, `buttonText`,
 * `footerText` and `sections` of rows with `title`, `description` and `rowId`), as lookup.ts
 * matches them; optional and forgiving as {@link ButtonsResponse}.
 */
const SentButtons = z
  .object({
    body: z.object({ text: z.string().nullish() }).nullish(),
    footer: z.object({ text: z.string().nullish() }).nullish(),
    nativeFlowMessage: z
      .object({
        buttons: z
          .array(z.object({ name: z.string().nullish(), buttonParamsJson: z.string().nullish() }))
          .nullish(),
      })
      .nullish(),
  })
  .nullish()
  .catch(null);
const SentList = z
  .object({
    title: z.string().nullish(),
    description: z.string().nullish(),
    buttonText: z.string().nullish(),
    footerText: z.string().nullish(),
    sections: z
      .array(
        z.object({
          title: z.string().nullish(),
          rows: z
            .array(
              z.object({
                title: z.string().nullish(),
                description: z.string().nullish(),
                rowId: z.string().nullish(),
              }),
            )
            .nullish(),
        }),
      )
      .nullish(),
  })
  .nullish()
  .catch(null);

/**
 * What the Baileys channel stores of a poll we sent (`pollMessage`: Baileys'
 * `PollCreationMessage`, as `pollCreationMessage` for several choices or `pollCreationMessageV3`
 * for one, `generateWAMessageContent` of https://github.com/WhiskeySockets/Baileys
 * src/Utils/messages.ts): `name`, `options` of `{ optionName }` and `selectableOptionsCount`, as
 * lookup.ts matches them; optional and forgiving as {@link ButtonsResponse}.
 */
const SentPoll = z
  .object({
    name: z.string().nullish(),
    options: z.array(z.object({ optionName: z.string().nullish() })).nullish(),
    selectableOptionsCount: z.number().nullish(),
  })
  .nullish()
  .catch(null);

/** A protobuf `Long` as `prepareMessage` passes it on (`{ low, high, unsigned }`), a number or its digits. */
const LongValue = z.union([
  z.number(),
  z.string(),
  z.object({ low: z.number(), high: z.number() }).transform(({ low, high }) => high * 2 ** 32 + (low >>> 0)),
]);

/**
 * A contact's vote on a poll (Baileys' `PollUpdateMessage`: `pollCreationMessageKey`, the poll's
 * key, `vote` and `senderTimestampMs`), as the Baileys channel's `messages.upsert` passes it on
 * once it has decrypted it (whatsapp.baileys.service.ts, `messageType === 'pollUpdateMessage'`):
 * with the poll it stored, it decrypts `vote` and sets `vote.selectedOptions` to the chosen
 * options' names (strings); without it, `selectedOptions` stays unset (or the encrypted hashes).
 */
export const PollUpdate = z
  .object({
    pollCreationMessageKey: z.object({ id: z.string().min(1) }),
    vote: z.object({ selectedOptions: z.array(z.unknown()).nullish() }).nullish(),
    senderTimestampMs: LongValue.nullish().catch(null),
  })
  .nullish()
  .catch(null);

/**
 * Baileys' `ContactMessage` (WAProto.proto of WhiskeySockets/Baileys): `displayName`, the name
 * WhatsApp shows, and `vcard`, the card (vCard 3.0, read by lib/vcard.ts `cardOfVcard`). A
 * `contactsArrayMessage` holds several; Evolution's `contactMessage` sends one card as a
 * `contactMessage` and more as a `contactsArrayMessage` (whatsapp.baileys.service.ts).
 */
const ContactMessage = z
  .object({ displayName: z.string().nullish(), vcard: z.string().nullish() })
  .nullish()
  .catch(null);

export const UpsertedMessage = z.object({
  key: z.object({
    id: z.string().min(1),
    remoteJid: z.string(),
    /** The chat's other JID (Baileys 7): the phone JID of a `@lid` chat, or the LID of a phone chat. */
    remoteJidAlt: z.string().nullish(),
    /** The phone JID of a `@lid` chat, as Baileys 6 gave it (Evolution 2.3.1–2.3.4). */
    senderPn: z.string().nullish(),
    /** The `@lid` chat id Evolution 2.3.1–2.3.4 replaced by `senderPn` in `remoteJid`. */
    previousRemoteJid: z.string().nullish(),
    fromMe: z.boolean(),
  }),
  /** The sender's WhatsApp name (`prepareMessage`: Baileys' `pushName`, else null in a one-person chat). */
  pushName: z.string().nullish(),
  messageType: z.string(),
  message: z
    .object({
      conversation: z.string().nullish(),
      extendedTextMessage: z.object({ text: z.string().nullish() }).nullish(),
      imageMessage: Caption,
      videoMessage: Caption,
      documentMessage: Caption,
      documentWithCaptionMessage: z
        .object({ message: z.object({ documentMessage: Caption }).nullish() })
        .nullish(),
      mediaUrl: z.string().nullish(),
      locationMessage: LocationMessage,
      liveLocationMessage: LocationMessage,
      /** Baileys' `ReactionMessage`: the reacted message's key, the emoji ("" when taken off). */
      reactionMessage: z
        .object({
          key: z.object({ id: z.string().min(1) }),
          text: z.string().nullish(),
          senderTimestampMs: z.union([z.number(), z.string()]).nullish(),
        })
        .nullish(),
      buttonsResponseMessage: ButtonsResponse,
      templateButtonReplyMessage: TemplateButtonReply,
      listResponseMessage: ListResponse,
      interactiveResponseMessage: InteractiveResponse,
      interactiveMessage: SentButtons,
      listMessage: SentList,
      pollCreationMessage: SentPoll,
      pollCreationMessageV3: SentPoll,
      pollUpdateMessage: PollUpdate,
      contactMessage: ContactMessage,
      contactsArrayMessage: z
        .object({ contacts: z.array(ContactMessage).nullish() })
        .nullish()
        .catch(null),
    })
    .nullish(),
  /**
   * `prepareMessage`'s `contextInfo`: up to 2.3.7 the content's `ContextInfo` (a reply's
   * `stanzaId` is the quoted message's id); from 2.4.0-rc1 the message's `messageContextInfo`,
   * which has no `stanzaId` (the content's stays inside `message`, {@link quotedIdOf}).
   */
  contextInfo: z.object({ stanzaId: z.string().nullish() }).nullish(),
  messageTimestamp: z.union([z.number(), z.string()]).nullish(),
});
export type Upserted = z.output<typeof UpsertedMessage>;

/** The `message` of a stored message, as {@link contentOf} reads it. */
export const StoredMessageBody = UpsertedMessage.shape.message;

/**
 * The id of the message a tap answers, from its own content's `contextInfo.stanzaId` (the
 * `buttonsResponseMessage`, `templateButtonReplyMessage`, `listResponseMessage` or
 * `interactiveResponseMessage` under `message`, which `prepareMessage` passes on whole); null for
 * other types, or when it names none. From 2.4.0-rc1 this is the only place a tap names it: the
 * top-level `contextInfo` became `messageContextInfo` (commit 2e3c8184 of
 * evolution-foundation/evolution-api, `prepareMessage`), where up to 2.3.7 it was the content's.
 */
export function quotedIdOf({
  messageType,
  message,
}: Pick<Upserted, "messageType" | "message">): string | null {
  const context =
    messageType === "buttonsResponseMessage"
      ? message?.buttonsResponseMessage?.contextInfo
      : messageType === "templateButtonReplyMessage"
        ? message?.templateButtonReplyMessage?.contextInfo
        : messageType === "listResponseMessage"
          ? message?.listResponseMessage?.contextInfo
          : messageType === "interactiveResponseMessage"
            ? message?.interactiveResponseMessage?.contextInfo
            : null;
  return context?.stanzaId || null;
}

/** The message types that carry media, which Evolution holds for `getBase64FromMediaMessage`. */
export const MEDIA_TYPES: ReadonlySet<MessageType> = new Set([
  "image",
  "video",
  "audio",
  "document",
  "sticker",
]);

/**
 * The message's type and text (or caption), a location's point as `payload`, and a tap as an
 * `interactive_reply` ({@link tapOf}), or null for types we do not receive (and a location without
 * a point on the map, a tap without an id). Takes the `messageType`
 * and `message` of a stored message too (`prepareMessage`, which both the webhook and `POST
 * /chat/findMessages` answer), so lookup.ts matches sent messages by it.
 */
export function contentOf({ messageType, message }: Pick<Upserted, "messageType" | "message">): {
  messageType: MessageType;
  content: string | null;
  payload?: MessagePayload;
} | null {
  switch (messageType) {
    case "locationMessage":
    case "liveLocationMessage": {
      const location = receivedLocation(
        messageType === "locationMessage" ? message?.locationMessage : message?.liveLocationMessage,
      );
      return location && { messageType: "location", content: locationLabel(location), payload: { location } };
    }
    case "contactMessage":
    case "contactsArrayMessage": {
      const shared =
        messageType === "contactMessage"
          ? [message?.contactMessage]
          : (message?.contactsArrayMessage?.contacts ?? []);
      const cards = shared.flatMap((c) => (c?.vcard ? (cardOfVcard(c.vcard, c.displayName) ?? []) : []));
      return cards.length > 0
        ? { messageType: "contacts", content: contactCardsLabel(cards), payload: { contacts: cards } }
        : null;
    }
    case "buttonsResponseMessage": {
      const tap = message?.buttonsResponseMessage;
      return tapOf("button_reply", tap?.selectedButtonId, tap?.selectedDisplayText);
    }
    case "templateButtonReplyMessage": {
      const tap = message?.templateButtonReplyMessage;
      return tapOf("button_reply", tap?.selectedId, tap?.selectedDisplayText);
    }
    case "interactiveResponseMessage": {
      const tap = message?.interactiveResponseMessage;
      return tapOf("button_reply", paramsIdOf(tap?.nativeFlowResponseMessage?.paramsJson), tap?.body?.text);
    }
    case "listResponseMessage": {
      const tap = message?.listResponseMessage;
      return tapOf("list_reply", tap?.singleSelectReply?.selectedRowId, tap?.title, tap?.description);
    }
    case "conversation":
    case "extendedTextMessage":
      return {
        messageType: "text",
        content: message?.conversation ?? message?.extendedTextMessage?.text ?? null,
      };
    case "imageMessage":
      return { messageType: "image", content: message?.imageMessage?.caption ?? null };
    case "videoMessage":
      return { messageType: "video", content: message?.videoMessage?.caption ?? null };
    case "audioMessage":
      return { messageType: "audio", content: null };
    case "stickerMessage":
      return { messageType: "sticker", content: null };
    case "documentMessage":
    case "documentWithCaptionMessage":
      return {
        messageType: "document",
        content:
          message?.documentMessage?.caption ??
          message?.documentWithCaptionMessage?.message?.documentMessage?.caption ??
          null,
      };
    default:
      return null;
  }
}

/**
 * A contact's tap as an `interactive_reply` (lib/interactive.ts `InteractiveReply`): `id` the
 * button's or row's id as we sent it, `title` its label (content too; "" when the message gives
 * none), a row's `description` when non-empty; null without an id. What each tap message gives:
 * - `buttonsResponseMessage`: `selectedButtonId`, `selectedDisplayText` (Baileys' `buttonReply`
 *   of type `plain`, src/Utils/messages.ts `generateWAMessageContent`);
 * - `templateButtonReplyMessage`: `selectedId`, `selectedDisplayText` (`buttonReply` of type
 *   `template`); Evolution's own chatbots read both as the tapped button's id
 *   (src/utils/getConversationMessage.ts of evolution-foundation/evolution-api);
 * - `interactiveResponseMessage`: the tap on a `quick_reply` button of the native-flow
 *   `interactiveMessage` that `buttonMessage` sends from 2.4.0-rc1: `paramsJson`, the JSON of an
 *   object whose `id` is the one the button's `buttonParamsJson` carried
 *   (`toNativeFlowButton`: `{ display_text, id }`), and `body.text`, the button's label. WhatsApp
 *   documents neither; read whatever `nativeFlowResponseMessage.name` says, so a response
 *   without an `id` (a `cta_url` or `cta_copy` button's, which we never send) is dropped;
 * - `listResponseMessage` (the legacy list `listMessage` sends): `singleSelectReply.selectedRowId`,
 *   the row's `title` and `description`.
 */
function tapOf(
  type: InteractiveReply["type"],
  id: string | null | undefined,
  title: string | null | undefined,
  description?: string | null,
): { messageType: MessageType; content: string; payload: MessagePayload } | null {
  if (!id) return null;
  const reply: InteractiveReply = { type, id, title: title ?? "", ...(description ? { description } : {}) };
  return { messageType: "interactive_reply", content: reply.title, payload: { interactive_reply: reply } };
}

/**
 * The `id` of a native-flow `paramsJson` or `buttonParamsJson` (the JSON of an object with a
 * non-empty string `id`), or null for text that is not such JSON.
 */
export function paramsIdOf(json: string | null | undefined): string | null {
  if (!json) return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  const parsed = z.object({ id: z.string().min(1) }).safeParse(value);
  return parsed.success ? parsed.data.id : null;
}

/**
 * A Baileys `LocationMessage` as lib/location.ts `Location`: the point (`degreesLatitude`,
 * `degreesLongitude`), and `name`, `address` and `url` when given non-empty (our sends give ""
 * for a missing name or address, send.ts `locationCall`; `name` and `address` cut to
 * {@link MAX_LOCATION_TEXT} UTF-16 units, the most a stored location holds, without splitting a
 * character). Null without both coordinates, or for a point off the map.
 *
 * A `LiveLocationMessage` (a contact sharing where they are for a while) is read the same way, as
 * the point where the sharing began: a linked device such as Evolution's receives that first
 * message alone (the position updates go to the phone, not to WhatsApp Web clients:
 * https://github.com/WhiskeySockets/Baileys/issues/1026), so it is one message with one point, and
 * storing it keeps the contact's message rather than dropping it.
 */
function receivedLocation(location: z.output<typeof LocationMessage> | undefined): Location | null {
  if (typeof location?.degreesLatitude !== "number" || typeof location.degreesLongitude !== "number")
    return null;
  const text = (value: string | null | undefined) =>
    value ? value.slice(0, MAX_LOCATION_TEXT).replace(/[\uD800-\uDBFF]$/, "") : "";
  const name = text(location.name);
  const address = text(location.address);
  const parsed = LocationSchema.safeParse({
    latitude: location.degreesLatitude,
    longitude: location.degreesLongitude,
    ...(name ? { name } : {}),
    ...(address ? { address } : {}),
    ...(location.url ? { url: location.url } : {}),
  });
  return parsed.success ? parsed.data : null;
}
