import { z } from "zod";
import { contactCardsLabel, contactCardsOf } from "../../lib/contact-cards";
import { type Interactive, interactiveOf } from "../../lib/interactive";
import { type Location, locationOf } from "../../lib/location";
import { type Poll, pollOf } from "../../lib/poll";
import type { LookupResult, SentQuery } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { contentOf, paramsIdOf, StoredMessageBody } from "./content";
import { chatJidOf } from "./recipient";
import { buttonsFields, listFields } from "./send";

/*
 * Asking Evolution API whether it holds a message we sent, to settle a send whose outcome was
 * unknown. Sources, by path in evolution-foundation/evolution-api (`develop`, 2.4.0-rc):
 * src/api/routes/chat.router.ts (`POST /chat/findMessages/{instance}`, validated by
 * `messageValidateSchema` of src/validate/chat.schema.ts), `fetchMessages` of
 * src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts (the Prisma query and the
 * answer), and `sendMessageWithTyping` there, which stores a sent message (`message.create` of
 * `prepareMessage`) only after Baileys relayed it. Evolution stores messages only when it runs
 * with `DATABASE_SAVE_DATA_NEW_MESSAGE=true`; without it every lookup answers absent, so that
 * setting is required for exactly-once sends.
 */

/** A stored message as `fetchMessages` selects it (`key`, `messageType`, `message`, `messageTimestamp`, …). */
const StoredMessage = z.object({
  key: z.object({ id: z.string().min(1), fromMe: z.boolean().nullish() }),
  messageType: z.string(),
  message: StoredMessageBody,
  messageTimestamp: z.union([z.number(), z.string()]).nullish(),
});

/** `fetchMessages` → `{ messages: { total, pages, currentPage, records } }`, newest first. */
const FoundMessages = z.object({
  messages: z.object({ pages: z.number(), records: z.array(StoredMessage) }),
});

/** Records a page holds (`offset` is the page size in `fetchMessages`; it defaults to 50). */
const PAGE_SIZE = 100;
/** Pages read of one chat's window before giving up (answering unreachable): 1,000 messages. */
const MAX_PAGES = 10;

/**
 * Whether instance `sessionId` holds `query`, a message we sent, in two steps:
 *
 * 1. by its id: `{ where: { key: { id: clientMessageId, fromMe: true } } }` (the Prisma filter
 *    `key.path(['id']) equals …`). Text and media sends carry the id as `messageId` (send.ts), so
 *    a message Evolution relayed is stored under it → found, with that id (the `key.id` acks use).
 * 2. when none has it, by the chat and time: our messages to `<digits>@s.whatsapp.net`, or to the
 *    `<digits>@lid` a LID recipient is (recipient.ts `chatJidOf`; Evolution matches it against
 *    `key.remoteJid` or `key.remoteJidAlt`, so a chat under its other id is found too) stored from `since` (floored to the second) until now, whose type and text or
 *    caption are the message's (events.ts `contentOf`; a location's, its point, name and address;
 *    reply buttons' or a list's, as {@link sameInteractive} compares them; a poll's, as
 *    {@link samePoll} does)
 *    → found, with the stored `key.id`. This finds voice notes, locations, reply buttons and
 *    lists and polls, which `sendWhatsAppAudio`, `sendLocation`, `sendButtons`, `sendList` and
 *    `sendPoll` send under an
 *    id of Baileys' choosing, and
 *    messages of servers before 2.4.0, which ignore `messageId`. Two of our messages of the same
 *    type and content to one chat in that window cannot be told apart: the first one stored is
 *    taken.
 *
 * Neither → absent. Any failed call (the instance unknown, 5xx, timeout, an answer of another
 * shape, more than {@link MAX_PAGES} pages) → unreachable: absent only when Evolution answered.
 * Never throws.
 */
export async function lookupMessage(
  http: GatewayHttp,
  sessionId: string,
  query: SentQuery,
): Promise<LookupResult> {
  try {
    const byId = await findMessages(http, sessionId, {
      where: { key: { id: query.clientMessageId, fromMe: true } },
    });
    const exact = byId.records.find((record) => record.key.id === query.clientMessageId);
    if (exact) return { result: "found", providerMessageId: exact.key.id };
    const window = {
      key: { fromMe: true, remoteJid: chatJidOf(query.to) },
      messageTimestamp: {
        gte: new Date(Math.floor(query.since / 1000) * 1000).toISOString(),
        lte: new Date().toISOString(),
      },
    };
    const matches: string[] = [];
    for (let page = 1, pages = 1; page <= pages; page += 1) {
      if (page > MAX_PAGES) {
        return { result: "unreachable", reason: `lookup_window_too_large: ${pages} pages` };
      }
      const found = await findMessages(http, sessionId, { where: window, page, offset: PAGE_SIZE });
      pages = found.pages;
      for (const record of found.records) if (sameMessage(record, query)) matches.push(record.key.id);
    }
    // Records come newest first: the last match is the first stored.
    const first = matches.at(-1);
    return first ? { result: "found", providerMessageId: first } : { result: "absent" };
  } catch (error) {
    return { result: "unreachable", reason: error instanceof Error ? error.message : String(error) };
  }
}

async function findMessages(
  http: GatewayHttp,
  sessionId: string,
  body: object,
): Promise<z.output<typeof FoundMessages>["messages"]> {
  const answer = await gatewayRequest(http, {
    method: "POST",
    path: `/chat/findMessages/${sessionId}`,
    body,
    schema: FoundMessages,
  });
  return answer.messages;
}

/**
 * A stored message of ours with the type and text (or caption, null when none) of `query`; for a
 * location, the point, name and address of `query`'s (send.ts sends them as they are, and a
 * missing name or address as "", which events.ts `contentOf` reads back as absent).
 */
function sameMessage(record: z.output<typeof StoredMessage>, query: SentQuery): boolean {
  if (record.key.fromMe === false) return false;
  if (query.type === "interactive") return sameInteractive(record, query.content);
  if (query.type === "poll") return samePoll(record, query.content);
  const content = contentOf(record);
  if (!content || content.messageType !== query.type) return false;
  if (query.type === "location") return samePlace(content.payload?.location, query.content);
  if (query.type === "contacts") return sameNames(content.content, query.content);
  return query.type === "audio" || (content.content ?? null) === (query.content || null);
}

/**
 * Whether `stored`, the names of stored cards (events.ts `contentOf`), are those of the cards
 * `sent` (the JSON of lib/contact-cards.ts `ContactCard`s): Evolution writes each card's vCard
 * from its `fullName` (send.ts `contactsCall`), so its `FN` is the card's formatted name.
 */
function sameNames(stored: string | null, sent: string | null): boolean {
  try {
    return stored === contactCardsLabel(contactCardsOf(sent));
  } catch {
    return false;
  }
}

/** Whether `stored` is the location `sent` (the JSON of a lib/location.ts `Location`) names. */
function samePlace(stored: Location | undefined, sent: string | null): boolean {
  let location: Location;
  try {
    location = locationOf(sent);
  } catch {
    return false;
  }
  return (
    stored?.latitude === location.latitude &&
    stored.longitude === location.longitude &&
    stored.name === location.name &&
    stored.address === location.address
  );
}

/**
 * Whether `record` is the poll `sent` (the JSON of a lib/poll.ts `Poll`) as the Baileys channel
 * stores it (events.ts `SentPoll`): a `pollCreationMessage` (several choices, send.ts `pollCall`'s
 * `selectableCount` 0) or `pollCreationMessageV3` (one choice, 1) with the question as `name` and
 * the options as `options[].optionName`, in order.
 */
function samePoll(record: z.output<typeof StoredMessage>, sent: string | null): boolean {
  let poll: Poll;
  try {
    poll = pollOf(sent);
  } catch {
    return false;
  }
  const type = poll.multiple_answers ? "pollCreationMessage" : "pollCreationMessageV3";
  const stored = record.messageType === type ? record.message?.[type] : null;
  const options = (stored?.options ?? []).map((option) => option.optionName);
  return (
    !!stored &&
    stored.name === poll.question &&
    options.length === poll.options.length &&
    options.every((option, i) => option === poll.options[i])
  );
}

/**
 * Whether `record` is the interactive message `sent` (the JSON of a lib/interactive.ts
 * `Interactive`) as the Baileys channel stores it (events.ts `SentButtons`, `SentList`):
 * - reply buttons: an `interactiveMessage` whose `body.text` is the text `buttonMessage` writes
 *   of send.ts `buttonsFields` (`*<title>*`, then `\n\n<description>` when there is one), whose
 *   footer is the footer's text, and whose buttons are `quick_reply` buttons with the sent ids in
 *   order (each `buttonParamsJson`'s `id`);
 * - a list: a `listMessage` with the `title`, `description`, `buttonText` and `footerText` of
 *   send.ts `listFields`, and its rows' `rowId`s the sent row ids in order.
 */
function sameInteractive(record: z.output<typeof StoredMessage>, sent: string | null): boolean {
  let interactive: Interactive;
  try {
    interactive = interactiveOf(sent);
  } catch {
    return false;
  }
  const sameIds = (stored: (string | null | undefined)[], ids: string[]) =>
    stored.length === ids.length && stored.every((id, i) => id === ids[i]);
  if (interactive.type === "button") {
    const stored = record.message?.interactiveMessage;
    if (record.messageType !== "interactiveMessage" || !stored) return false;
    const { title, description, footer, buttons } = buttonsFields(interactive);
    const storedButtons = stored.nativeFlowMessage?.buttons ?? [];
    return (
      stored.body?.text === (description ? `*${title}*\n\n${description}` : `*${title}*`) &&
      (stored.footer?.text ?? undefined) === footer &&
      storedButtons.every((button) => button.name === "quick_reply") &&
      sameIds(
        storedButtons.map((button) => paramsIdOf(button.buttonParamsJson)),
        buttons.map((button) => button.id),
      )
    );
  }
  const stored = record.message?.listMessage;
  if (record.messageType !== "listMessage" || !stored) return false;
  const fields = listFields(interactive);
  return (
    (stored.title ?? "") === fields.title &&
    stored.description === fields.description &&
    stored.buttonText === fields.buttonText &&
    (stored.footerText ?? "") === fields.footerText &&
    sameIds(
      (stored.sections ?? []).flatMap((section) => (section.rows ?? []).map((row) => row.rowId)),
      fields.sections.flatMap((section) => section.rows.map((row) => row.rowId)),
    )
  );
}
