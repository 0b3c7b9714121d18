import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { readConfig } from "../../config";
import type { Db } from "../../db/client";
import { databaseFor, routeFor } from "../../db/databases";
import { findAccount } from "../../db/queries/accounts";
import { findMessage, otpMessageContents } from "../../db/queries/messages";
import { findSession, sessionById } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { providerIdOf, sessionOfPairToken } from "../../gateways/sandbox";
import { type ContactCard, contactCardsLabel, contactCardsOf } from "../../lib/contact-cards";
import { capabilitiesOf } from "../../lib/gateway-kinds";
import { choicesOf, type InteractiveReply, interactiveOf } from "../../lib/interactive";
import { type Location, locationLabel, locationOf } from "../../lib/location";
import type { MessagePayload } from "../../lib/message-payload";
import { pollLabel, pollOf } from "../../lib/poll";
import { fromSessionHealth } from "../../lib/session-health";
import { formatTimestamp } from "../../lib/time";
import { parseMessageMetadata } from "../../messages/metadata";
import { receivePollVote } from "../../messages/poll-votes";
import { receiveReaction } from "../../messages/reactions";
import { receiveMessage } from "../../messages/receive";
import { quoteTarget } from "../../messages/reply";
import { verifyByIncoming } from "../../otp/reverse";
import { toMessageRecord } from "../../presenters/message";
import { unwrap } from "../../sessions/result";
import { sessionStub } from "../../sessions/stub";
import { renderPairPage } from "../../web/sandbox/pair-page";
import type * as routes from "./sandbox.routes";

/**
 * The caller's session `id` when it is on the sandbox: 404 `not_found` for unknown sessions,
 * others' sessions and sessions on another gateway, as when the deployment has no sandbox.
 */
async function sandboxSession(c: Context<AppEnv>, id: string) {
  const row = await findSession(c.var.db, c.var.principal.accountId, id);
  if (!row) throw new ApiError("not_found", "No such session.");
  if (!capabilitiesOf(row.gateway ?? readConfig(c.env).CHATAPP_GATEWAY).simulatesNetwork)
    throw new ApiError("not_found", "No such resource.");
  return row;
}

async function ownedSession(c: Context<AppEnv>, id: string) {
  await sandboxSession(c, id);
  return sessionStub(c.env, id);
}

export const scan: RouteHandler<typeof routes.scan, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const body = c.req.valid("json");
  const session = unwrap(
    await stub.standIn({
      type: "scan",
      phoneNumber: body.phone_number,
      displayName: body.display_name,
      pairingCode: body.pairing_code,
    }),
  );
  return c.json({ success: true as const, session }, 200);
};

export const drop: RouteHandler<typeof routes.drop, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const body = c.req.valid("json");
  const session = unwrap(
    await stub.standIn({
      type: "drop",
      reason: body.reason ?? "connection_lost",
      loggedOut: body.logged_out ?? false,
    }),
  );
  return c.json({ success: true as const, session }, 200);
};

export const ban: RouteHandler<typeof routes.ban, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const session = unwrap(await stub.standIn({ type: "ban", reason: c.req.valid("json").reason ?? "banned" }));
  return c.json({ success: true as const, session }, 200);
};

export const health: RouteHandler<typeof routes.health, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const session = unwrap(
    await stub.standIn({ type: "health", health: fromSessionHealth(c.req.valid("json"), Date.now()) }),
  );
  return c.json({ success: true as const, session }, 200);
};

/**
 * A contact's tap on choice `choiceId` of the account's interactive message `messageId` (docs/messages.md,
 * Sending messages → Buttons and lists): a `button_reply` or `list_reply` with the choice's title
 * (and a row's description), as a gateway reports one.
 * @throws ApiError `validation_failed` (422) naming `reply_to` for a message that is not an
 *   interactive one, or `interactive_reply.id` for an id it does not have.
 */
async function tapOn(
  db: Db,
  accountId: string,
  messageId: string,
  choiceId: string,
): Promise<InteractiveReply> {
  const row = await findMessage(db, accountId, messageId);
  const interactive = row ? parseMessageMetadata(row.metadata).interactive : undefined;
  if (!interactive)
    throw new ApiError("validation_failed", "A tap answers an interactive message.", {
      fields: { reply_to: ["not an interactive message"] },
    });
  const choice = choicesOf(interactive).find((c) => c.id === choiceId);
  if (!choice)
    throw new ApiError("validation_failed", "The interactive message has no such button or row.", {
      fields: { "interactive_reply.id": ["no such button or row"] },
    });
  return { type: interactive.type === "button" ? "button_reply" : "list_reply", ...choice };
}

/**
 * What a contact's message through the sandbox stores as `content` and as its type's own object
 * (`payload`, kept in `metadata`), as a real gateway's event gives them: a tap's title and the tap,
 * a location's name or address and the point, the cards' names and the cards, else the text.
 */
function inboundContent(
  body: { content?: string | null; location?: Location; contacts?: ContactCard[] },
  tap: InteractiveReply | null,
): { content: string | null; payload?: MessagePayload } {
  if (tap) return { content: tap.title, payload: { interactive_reply: tap } };
  if (body.location) return { content: locationLabel(body.location), payload: { location: body.location } };
  if (body.contacts)
    return { content: contactCardsLabel(body.contacts), payload: { contacts: body.contacts } };
  return { content: body.content ?? null };
}

/**
 * Checks a contact's vote `options` on the account's message `messageId` (docs/messages.md,
 * Sending messages → Polls): the message must be a poll, each option one of its own, and a single-choice poll takes
 * one option at most.
 * @throws ApiError `validation_failed` (422) naming `reply_to` for a message that is not a poll,
 *   `poll_vote.options.<i>` for an option the poll does not have, or `poll_vote.options` for
 *   several options on a single-choice poll.
 */
async function checkVote(db: Db, accountId: string, messageId: string, options: string[]): Promise<void> {
  const row = await findMessage(db, accountId, messageId);
  const poll = row ? parseMessageMetadata(row.metadata).poll : undefined;
  if (!poll)
    throw new ApiError("validation_failed", "A vote answers a poll.", {
      fields: { reply_to: ["not a poll"] },
    });
  const unknown = options.findIndex((option) => !poll.options.includes(option));
  if (unknown >= 0)
    throw new ApiError("validation_failed", "The poll has no such option.", {
      fields: { [`poll_vote.options.${unknown}`]: ["not an option of the poll"] },
    });
  if (!poll.multiple_answers && new Set(options).size > 1)
    throw new ApiError("validation_failed", "The poll takes one option.", {
      fields: { "poll_vote.options": ["one option at most: the poll is single choice"] },
    });
}

export const inbound: RouteHandler<typeof routes.inbound, AppEnv> = async (c) => {
  const session = await sandboxSession(c, c.req.valid("param").id);
  if (session.status !== "connected")
    throw new ApiError("session_not_connected", `The session is ${session.status}.`);
  const body = c.req.valid("json");
  const quoted = body.reply_to
    ? await quoteTarget(c.var.db, {
        accountId: session.accountId,
        sessionId: session.id,
        messageId: body.reply_to,
        to: body.from_number ?? null,
        field: "reply_to",
      })
    : null;
  if (body.type === "poll_vote") {
    // The body's schema requires both for a vote.
    if (!body.poll_vote || !quoted) throw new Error("a poll_vote without poll_vote or reply_to");
    // A vote is kept on the poll, as a gateway's `poll_vote` event is (messages/poll-votes.ts).
    await checkVote(c.var.db, session.accountId, quoted.id, body.poll_vote.options);
    await receivePollVote(
      c.env,
      {
        accountId: session.accountId,
        sessionId: session.id,
        providerMessageId: quoted.id,
        from: body.from_number ?? body.from_user_id ?? "",
        options: body.poll_vote.options,
        at: Date.now(),
      },
      { byId: true },
    );
    const poll = await findMessage(c.var.db, session.accountId, quoted.id);
    if (!poll) throw new ApiError("not_found", "No such message.");
    return c.json({ success: true as const, data: toMessageRecord(poll) }, 200);
  }
  const tap =
    body.interactive_reply && quoted
      ? await tapOn(c.var.db, session.accountId, quoted.id, body.interactive_reply.id)
      : null;
  // Its sandbox id is derived from ours, as a sent message's is, so a reply or reaction can name it.
  const id = crypto.randomUUID();
  const incoming = {
    id,
    providerMessageId: providerIdOf(id),
    replyTo: quoted?.id ?? null,
    accountId: session.accountId,
    sessionId: session.id,
    contact: {
      phoneNumber: body.from_number ?? null,
      userId: body.from_user_id ?? null,
      username: body.username ?? null,
      name: body.name ?? null,
    },
    toNumber: session.phoneNumber ?? session.sessionId,
    type: body.type,
    ...inboundContent(body, tap),
    mediaUrl: body.media_url ?? null,
    at: Date.now(),
  };
  const row = await receiveMessage(c.env, incoming);
  if (!row) throw new Error("insert of an incoming message without provider id stored nothing");
  // Its media is kept as a real gateway's is: downloaded once by the session object, off this call.
  if (row.mediaUrl) await sessionStub(c.env, session.id).keepIncomingMedia(row.id, row.mediaUrl);
  // A reverse OTP's code in the text verifies it, as through a real gateway's webhook.
  await verifyByIncoming(c.env, c.var.db, incoming);
  // As stored, with the contact it taught (docs/contacts.md, Contacts).
  const stored = await findMessage(c.var.db, session.accountId, row.id);
  return c.json({ success: true as const, data: toMessageRecord(stored ?? row) }, 201);
};

export const inboundReaction: RouteHandler<typeof routes.inboundReaction, AppEnv> = async (c) => {
  const session = await sandboxSession(c, c.req.valid("param").id);
  if (session.status !== "connected")
    throw new ApiError("session_not_connected", `The session is ${session.status}.`);
  const body = c.req.valid("json");
  const target = await quoteTarget(c.var.db, {
    accountId: session.accountId,
    sessionId: session.id,
    messageId: body.message_id,
    to: body.from_number,
    field: "reaction",
  });
  await receiveReaction(
    c.env,
    {
      accountId: session.accountId,
      sessionId: session.id,
      providerMessageId: target.id,
      from: body.from_number,
      emoji: body.emoji,
      at: Date.now(),
    },
    { byId: true },
  );
  const row = await findMessage(c.var.db, session.accountId, target.id);
  if (!row) throw new ApiError("not_found", "No such message.");
  return c.json({ success: true as const, data: toMessageRecord(row) }, 200);
};

/**
 * What the phone received, with each one-time code masked as its message is stored and shown
 * (`•` per digit, docs/security.md, "Hardening"): the phone holds the code in clear, the API never shows it,
 * unless the deployment sets `SANDBOX_SHOW_CODES=true` (local development). A location shows its
 * point and place in `location` and its name or address as `content`; an interactive message its
 * buttons or list in `interactive` and its body's text as `content`; contact cards in `contacts`,
 * with their names as `content`; a poll in `poll`, with its question as `content`.
 */
export const received: RouteHandler<typeof routes.received, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const messages = unwrap(await stub.standInReceived(c.req.valid("query").to_number));
  const masked = readConfig(c.env).SANDBOX_SHOW_CODES
    ? new Map<string, string | null>()
    : await otpMessageContents(
        c.var.db,
        c.var.principal.accountId,
        messages.map((m) => m.message_id),
      );
  return c.json(
    {
      success: true as const,
      data: messages.map((m) => {
        const location = m.type === "location" ? locationOf(m.content) : null;
        const interactive = m.type === "interactive" ? interactiveOf(m.content) : null;
        const contacts = m.type === "contacts" ? contactCardsOf(m.content) : null;
        const poll = m.type === "poll" ? pollOf(m.content) : null;
        return {
          ...m,
          location,
          interactive,
          contacts,
          poll,
          content: location
            ? locationLabel(location)
            : interactive
              ? interactive.body.text
              : contacts
                ? contactCardsLabel(contacts)
                : poll
                  ? pollLabel(poll)
                  : masked.has(m.message_id)
                    ? (masked.get(m.message_id) ?? null)
                    : m.content,
          received_at: formatTimestamp(m.received_at),
        };
      }),
    },
    200,
  );
};

export const setPhone: RouteHandler<typeof routes.setPhone, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const data = unwrap(await stub.standInPhone(c.req.valid("json").online));
  return c.json({ success: true as const, data }, 200);
};

export const showPhone: RouteHandler<typeof routes.showPhone, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const data = unwrap(await stub.standInPhone());
  return c.json({ success: true as const, data }, 200);
};

async function pairedSession(c: Context<AppEnv>, token: string) {
  const id = sessionOfPairToken(token);
  const route = id && (await routeFor(c.env, "session", id));
  if (!id || !route) return null;
  const db = await databaseFor(c.env, route.accountId);
  const row = await sessionById(db, id);
  return row ? { row, db, stub: sessionStub(c.env, id) } : null;
}

const expired = renderPairPage({ view: "expired" });

/** The name of the account a session belongs to, as the pairing page shows it. */
async function accountNameOf(db: Db, accountId: string): Promise<string> {
  return (await findAccount(db, accountId))?.name ?? "this account";
}

export const pairPage: RouteHandler<typeof routes.pairPage, AppEnv> = async (c) => {
  const { token } = c.req.valid("param");
  const found = await pairedSession(c, token);
  if (found?.row.status !== "pending") return c.html(expired, 404);
  // Only the QR currently shown links (POST checks the same); a rotated one is expired.
  const current = await found.stub.qrPayload();
  if (!current.ok || !current.value.endsWith(`/sandbox/pair/${token}`)) return c.html(expired, 404);
  const accountName = await accountNameOf(found.db, found.row.accountId);
  return c.html(renderPairPage({ view: "confirm", accountName }), 200);
};

export const pair: RouteHandler<typeof routes.pair, AppEnv> = async (c) => {
  const { token } = c.req.valid("param");
  const found = await pairedSession(c, token);
  if (!found) return c.html(expired, 404);
  const result = await found.stub.standIn({ type: "scan", token });
  if (!result.ok) {
    const status = result.code === "session_not_pending" ? 409 : 404;
    return c.html(status === 409 ? renderPairPage({ view: "not_pending" }) : expired, status);
  }
  const accountName = await accountNameOf(found.db, found.row.accountId);
  const phoneNumber = result.value.phone_number ?? "";
  return c.html(renderPairPage({ view: "linked", accountName, phoneNumber }), 200);
};
