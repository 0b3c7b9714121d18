import { z } from "zod";
import { contactCardsOf } from "../../lib/contact-cards";
import { readLocation } from "../../lib/location";
import { cardOfVcard } from "../../lib/vcard";
import type { LookupResult, SentQuery } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";
import { wahaLocation } from "./location";
import { chatIdOf } from "./send";

/*
 * Asking WAHA whether it holds a message we sent, to settle a send whose outcome was unknown.
 * Sources: WAHA's docs "Chats → Get messages in chat" (https://waha.devlike.pro/docs/how-to/chats/,
 * devlikeapro/waha-docs content/docs/how-to/chats/index.md) and its OpenAPI document
 * (static/swagger/openapi.json there, WAHA 2026.7.1: `GET /api/{session}/chats/{chatId}/messages`,
 * its query parameters and the `WAMessage` answer). NOWEB answers it only with its store enabled
 * ("Chats → features", footnote 1); without it the call fails and the lookup is unreachable.
 */

/** `WAMessage` fields used here; `id` is in the `{fromMe}_{chatId}_{id}` form acks carry. */
const ListedMessage = z.looseObject({
  id: z.string().min(1),
  timestamp: z.number(),
  fromMe: z.boolean(),
  body: z.string().nullish(),
  hasMedia: z.boolean().nullish(),
  /** `WALocation` (location.ts `wahaLocation`); one without readable coordinates is read as none. */
  location: z.unknown().transform(wahaLocation).optional(),
  /** `vCards`: a contact message's cards. */
  vCards: z.array(z.string()).nullish().catch(null),
});

/** Messages asked for per call (`limit`, required). */
const PAGE_SIZE = 100;
/** Pages read before giving up (answering unreachable): 1,000 messages of ours since `since`. */
const MAX_PAGES = 10;

/**
 * Whether session `sessionId` holds `query`, a message we sent. The chat id comes from the
 * number lookup the send made (`chatIdOf`); a number that is not on the network → absent (a
 * resend is rejected by the same lookup, so nothing is sent twice). Then `GET
 * /api/{session}/chats/{chatId}/messages?limit=100&offset=…&downloadMedia=false&filter.fromMe=true
 * &filter.timestamp.gte=<since in seconds, floored>`, page by page, and of our messages in it:
 *
 * 1. one whose id ends with `_<clientMessageId>` → found: NOWEB and GOWS send a text, a location
 *    or a poll under the id we gave (send.ts);
 * 2. else the first one (oldest) with the same content: text → no media and `body` equal to the
 *    text; media → `hasMedia` and `body` equal to the caption (empty when none); a location → its
 *    `location` (`WALocation`, coordinates as strings) at the same point; contact cards → `vCards`
 *    of the same names ({@link sameCards}). WAHA's
 *    `WAMessage` carries no media type unless media are downloaded, so an image and a video with
 *    the same caption to one chat in the window cannot be told apart, nor two identical texts
 *    on engines that ignore our id;
 * 3. a list (interactive.ts) goes without our id (`SendListRequest` has no `id`), and neither the
 *    document nor the docs say what a list's `WAMessage` holds (`body`? its `_data` is the
 *    engine's raw data), so it is never found by content: while any message of ours in the window
 *    could be it ({@link couldBeList}: no media, location or cards) → unreachable, so the
 *    settlement asks again and, at `OUTCOME_SETTLE_HOURS`, fails it `outcome_unknown` (docs/exactly-once.md,
 *    Exactly once) rather than send it twice or call it sent on a guess. A poll not found by our
 *    id is settled the same way: `WAMessage` has no field for a poll (its question is neither
 *    `body` nor documented elsewhere), so nothing tells it from another message of ours.
 *
 * None → absent. Any failed call (5xx, timeout, a 4xx such as NOWEB without its store, an answer
 * of another shape, more than {@link MAX_PAGES} pages) → unreachable. Never throws.
 */
export async function lookupMessage(
  http: GatewayHttp,
  sessionId: string,
  query: SentQuery,
): Promise<LookupResult> {
  try {
    const chatId = await chatIdOf(http, sessionId, query.to);
    if (!chatId) return { result: "absent" };
    const sameContent: { id: string; timestamp: number }[] = [];
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const params = new URLSearchParams({
        limit: String(PAGE_SIZE),
        offset: String(page * PAGE_SIZE),
        downloadMedia: "false",
        "filter.fromMe": "true",
        "filter.timestamp.gte": String(Math.floor(query.since / 1000)),
      });
      const messages = await gatewayRequest(http, {
        method: "GET",
        path: `/api/${sessionId}/chats/${encodeURIComponent(chatId)}/messages?${params}`,
        schema: z.array(ListedMessage),
      });
      for (const message of messages) {
        if (!message.fromMe || message.timestamp < Math.floor(query.since / 1000)) continue;
        if (message.id.endsWith(`_${query.clientMessageId}`)) {
          return { result: "found", providerMessageId: message.id };
        }
        // A list or a poll has nothing to be matched by (3. above): only whether a message could be it.
        if (query.type === "interactive" || query.type === "poll") {
          if (couldBeList(message))
            return { result: "unreachable", reason: query.type === "poll" ? POLL_UNTOLD : LIST_UNTOLD };
        } else if (sameMessage(message, query)) sameContent.push(message);
      }
      if (messages.length < PAGE_SIZE) {
        // The oldest match: pages come in WAHA's order (newest first by default).
        const first = sameContent.sort((a, b) => a.timestamp - b.timestamp)[0];
        return first ? { result: "found", providerMessageId: first.id } : { result: "absent" };
      }
    }
    return {
      result: "unreachable",
      reason: `lookup_window_too_large: over ${MAX_PAGES * PAGE_SIZE} messages`,
    };
  } catch (error) {
    return { result: "unreachable", reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Whether `vcards` are the cards `sent` (the JSON of lib/contact-cards.ts `ContactCard`s) as
 * send.ts wrote them: the same formatted names, in order (lib/vcard.ts `cardOfVcard` reads `FN`).
 */
function sameCards(vcards: string[], sent: string | null): boolean {
  try {
    const names = vcards.map((vcard) => cardOfVcard(vcard)?.name.formatted_name);
    return (
      names.join("\n") ===
      contactCardsOf(sent)
        .map((card) => card.name.formatted_name)
        .join("\n")
    );
  } catch {
    return false;
  }
}

/**
 * The reason a list's lookup gives while the chat holds a message of ours that may be it: WAHA's
 * document describes no content of a list message to tell it by (see {@link lookupMessage}).
 */
const LIST_UNTOLD = "lookup_cannot_tell: WAHA gives no content to tell a sent list by";

/** As {@link LIST_UNTOLD}, for a poll. */
const POLL_UNTOLD = "lookup_cannot_tell: WAHA gives no content to tell a sent poll by";

/**
 * Whether `message`, one of ours, may be a list or a poll we sent: one without media, a location
 * or contact cards (each of which neither is: `hasMedia`, `location` and `vCards` of `WAMessage`).
 */
function couldBeList(message: z.output<typeof ListedMessage>): boolean {
  return !message.hasMedia && !message.location && (message.vCards ?? []).length === 0;
}

/** Our message with the content of `query` (see {@link lookupMessage}). */
function sameMessage(message: z.output<typeof ListedMessage>, query: SentQuery): boolean {
  if (query.type === "location") {
    const sent = readLocation(query.content);
    return (
      sent !== null &&
      message.location?.latitude === sent.latitude &&
      message.location?.longitude === sent.longitude
    );
  }
  if (query.type === "contacts") return sameCards(message.vCards ?? [], query.content);
  const body = message.body ?? "";
  if (query.type === "text") return !message.hasMedia && body === (query.content ?? "");
  return message.hasMedia === true && body === (query.type === "audio" ? "" : (query.content ?? ""));
}
