import { MAX_POLL_OPTIONS } from "./poll";

/**
 * The gateways a deployment can enable, by the name `CHATAPP_GATEWAY`, `CHATAPP_GATEWAYS` and a
 * session's `gateway` give them, and what each can do. Code outside src/gateways/ asks these
 * capabilities, never a gateway's name (STYLE.md, "Capabilities, not names"; the Biome plugin
 * lint/gateway-names.grit fails lint on a name compared elsewhere). The table sits on the
 * lowest floor because floors below gateways/ ask it too (messages/ checks a send's template and
 * service window); the implementations are in src/gateways/, created by src/gateways/index.ts.
 */
export interface GatewayCapabilities {
  /** A phone links the session by scanning a QR code (the session shows one while pending). */
  linksByQr: boolean;
  /** A phone links the session by entering a pairing code (`ChatGateway.requestPairingCode`). */
  linksByPairingCode: boolean;
  /**
   * The session is linked by credentials given when it is created (a business number's ids and
   * access token, in the create request's section named after the gateway), not by a phone.
   */
  linksByCredentials: boolean;
  /** Sends Meta's message templates (`type: "template"`; docs/gateways.md, Message templates). */
  sendsTemplates: boolean;
  /**
   * The kinds of interactive message (`type: "interactive"`; docs/messages.md, Sending messages
   * → Buttons and lists) the gateway sends: `button` (reply buttons), `list`. A send of another kind is
   * refused before any charge (422 `type_not_supported_by_gateway`).
   */
  sendsInteractive: readonly InteractiveKind[];
  /**
   * Sends stickers (`type: "sticker"`; docs/messages.md, Sending messages → Stickers). WAHA's API has no
   * sticker message: a sticker there is refused before any charge (422
   * `type_not_supported_by_gateway`).
   */
  sendsStickers: boolean;
  /**
   * Sends polls (`type: "poll"`; docs/messages.md, Sending messages → Polls): linked devices do (WAHA
   * `POST /api/sendPoll`, Evolution API `POST /message/sendPoll/{instance}`); Meta's Cloud API has
   * no poll message (its OpenAPI document, facebook/openapi business-messaging-api_v23.0.yaml,
   * names none). A poll where it is false is refused before any charge (422
   * `type_not_supported_by_gateway`).
   */
  sendsPolls: boolean;
  /**
   * The most options a poll the gateway sends may have: WhatsApp's 12 (lib/poll.ts
   * `MAX_POLL_OPTIONS`), or 10 on Evolution API, whose `pollMessageSchema` takes `values` of 2 to
   * 10 items (evolution-foundation/evolution-api src/validate/message.schema.ts). More is refused
   * before any charge (422 `type_not_supported_by_gateway` naming `poll.options`).
   */
  maxPollOptions: number;
  /**
   * Deletes a sent message for everyone (`DELETE /v1/chatapp/messages/{id}`; docs/messages.md,
   * Chat actions). The Cloud API cannot: a delete there is 409 `not_supported_by_gateway`.
   */
  deletesMessages: boolean;
  /**
   * Edits a sent text (`PATCH /v1/chatapp/messages/{id}`; docs/messages.md, Chat actions); as {@link
   * deletesMessages}.
   */
  editsMessages: boolean;
  /**
   * Free-form messages reach a contact only within the customer service window, 24 hours after
   * the contact last wrote (messages/service-window.ts); a one-time code then goes out as the
   * app's authentication template.
   */
  needsServiceWindow: boolean;
  /**
   * The gateway's view of a session is checked on a schedule (`GATEWAY_CHECK_SECONDS`), as its
   * webhooks may be lost; a gateway that is its own truth is checked only on demand.
   */
  checkedOnSchedule: boolean;
  /**
   * The gateway stands in for the chat network and the phones on it (the sandbox): the
   * `/sandbox` routes drive it, and the session object plays the network's events through it
   * (`ChatGateway.standIn`).
   */
  simulatesNetwork: boolean;
  /**
   * The kinds of user id a message can be sent to (`to_user_id`; docs/contacts.md, Contacts): `bsuid`, a
   * Cloud API business-scoped user id (Meta's `recipient` field), `lid`, a linked-device id
   * (`<digits>@lid`, a chat id of WAHA and Evolution API). A send to another kind is refused
   * before any charge (422 `recipient_not_supported`).
   */
  sendsToUserIds: readonly UserIdKind[];
}

/** The kinds of interactive message (lib/interactive.ts `Interactive`): reply buttons and lists. */
export type InteractiveKind = "button" | "list";

/** The kinds of user id (src/lib/contact-identity.ts `userIdKind`): BSUIDs and LIDs. */
export const USER_ID_KINDS = ["bsuid", "lid"] as const;

/** A kind of user id: one of {@link USER_ID_KINDS}. */
export type UserIdKind = (typeof USER_ID_KINDS)[number];

/** A gateway reached over the network that a phone links by QR code or pairing code. */
const LINKED_DEVICE: GatewayCapabilities = {
  linksByQr: true,
  linksByPairingCode: true,
  linksByCredentials: false,
  sendsTemplates: false,
  sendsInteractive: [],
  sendsStickers: true,
  sendsPolls: true,
  maxPollOptions: MAX_POLL_OPTIONS,
  deletesMessages: false,
  editsMessages: false,
  needsServiceWindow: false,
  checkedOnSchedule: true,
  simulatesNetwork: false,
  sendsToUserIds: ["lid"],
};

/** Each gateway's capabilities, by name; the key order is the order the API document lists them. */
const GATEWAY_KINDS = {
  sandbox: {
    ...LINKED_DEVICE,
    checkedOnSchedule: false,
    simulatesNetwork: true,
    sendsInteractive: ["button", "list"],
    deletesMessages: true,
    editsMessages: true,
    sendsToUserIds: ["bsuid", "lid"],
  },
  waha: {
    ...LINKED_DEVICE,
    sendsInteractive: ["list"],
    sendsStickers: false,
    deletesMessages: true,
    editsMessages: true,
  },
  evolution: {
    ...LINKED_DEVICE,
    sendsInteractive: ["button", "list"],
    maxPollOptions: 10,
    deletesMessages: true,
    editsMessages: true,
  },
  cloud_api: {
    ...LINKED_DEVICE,
    linksByQr: false,
    linksByPairingCode: false,
    linksByCredentials: true,
    sendsTemplates: true,
    sendsInteractive: ["button", "list"],
    sendsPolls: false,
    maxPollOptions: 0,
    needsServiceWindow: true,
    sendsToUserIds: ["bsuid"],
  },
} as const satisfies Record<string, GatewayCapabilities>;

/** The name of a gateway: one of {@link GATEWAY_NAMES}. */
export type GatewayKind = keyof typeof GATEWAY_KINDS;

/** The gateways a deployment can enable (`CHATAPP_GATEWAY`, `CHATAPP_GATEWAYS`), in order. */
export const GATEWAY_NAMES = Object.keys(GATEWAY_KINDS) as [GatewayKind, ...GatewayKind[]];

/** What gateway `name` can do. */
export function capabilitiesOf(name: GatewayKind): GatewayCapabilities {
  return GATEWAY_KINDS[name];
}
