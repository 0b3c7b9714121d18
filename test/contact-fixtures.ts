import { expect } from "vitest";
import { command, createCampaign } from "./campaign-fixtures";
import { call, TIMESTAMP } from "./helpers";
import { sendText, waitForMessages } from "./message-fixtures";

// Reading contacts back through the API (docs/contacts.md, Contacts), as the contact tests of every gateway
// do: a message's contact, a contact with its identifiers, the contact.* events and the opt-out
// list. The shapes are the presenters' (src/presenters/contact.ts, src/presenters/opt-out.ts),
// with the fields these tests read.

/** A message's contact, `Message.contact` (src/presenters/contact.ts `toContactRef`). */
export interface ContactRef {
  id: string;
  phone_number: string | null;
  user_id: string | null;
  parent_user_id: string | null;
  username: string | null;
  name: string | null;
}

/**
 * A contact as `GET /v1/contacts` lists it (`toContactRecord`), and as `GET /v1/contacts/{id}`
 * shows it (`toContactDetail`: with `identifiers` and `opted_out`).
 */
export interface Contact extends ContactRef {
  chatapp_session_id: string;
  first_message_at: string | null;
  last_message_at: string | null;
  window_open_until: string | null;
  identifiers?: { kind: string; value: string; since: string }[];
  opted_out?: boolean;
}

/** An incoming message as the message list and `GET /v1/chatapp/messages/{id}` show it. */
export interface IncomingMessage {
  id: string;
  provider_message_id: string | null;
  from_number: string | null;
  content: string | null;
  contact: ContactRef | null;
}

/** A `contact.created` or `contact.updated` event (`data` the contact, or `{contact, previous}`). */
export interface ContactEvent {
  type: string;
  data: Record<string, unknown>;
}

/** An opt-out as `GET /v1/opt-outs` lists it (src/presenters/opt-out.ts `toOptOutRecord`). */
export interface OptOut {
  to_number: string | null;
  user_id: string | null;
  source: "api" | "keyword";
  keyword: string | null;
  created_at: string;
}

/** The account's incoming messages, newest first (as listed). */
export async function incomingMessages(key: string): Promise<IncomingMessage[]> {
  const res = await call<{ data: IncomingMessage[] }>(
    "GET",
    "/v1/chatapp/messages?filter[direction]=incoming",
    { key },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** Contact `id` as `GET /v1/contacts/{id}` shows it. */
export async function shownContact(key: string, id: string | null | undefined): Promise<Contact> {
  const res = await call<{ data: Contact }>("GET", `/v1/contacts/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The account's `contact.created` and `contact.updated` events, oldest first. */
export async function contactEvents(key: string): Promise<ContactEvent[]> {
  const res = await call<{ data: ContactEvent[] }>(
    "GET",
    "/v1/events?limit=100&filter[type]=contact.created,contact.updated",
    { key },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.data.reverse();
}

/** The contact's identifiers as `[kind, value]`, sorted. */
export const identifiersOf = (contact: Contact) =>
  (contact.identifiers ?? []).map((i) => [i.kind, i.value]).sort();

/** The account's opt-out list, newest first (one page of 100). */
export async function optOutsOf(key: string): Promise<OptOut[]> {
  const res = await call<{ data: OptOut[] }>("GET", "/v1/opt-outs?limit=100", { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/**
 * `POST /v1/chatapp/messages` of text `content` to `userIds` (`to_user_id`), without a pacing gap;
 * `extra` adds to the body (`reply_to`, …).
 */
export function sendToUserIds(
  key: string,
  sessionId: string,
  userIds: string[],
  content: string,
  extra: Record<string, unknown> = {},
) {
  return call<{ data: { messages: { id: string; to_number: string | null }[] } }>(
    "POST",
    "/v1/chatapp/messages",
    {
      key,
      body: {
        chatapp_session_id: sessionId,
        to_user_id: userIds,
        type: "text",
        content,
        delay_between: 0,
        ...extra,
      },
    },
  );
}

/**
 * Asserts that contact `id`, first known by user id `userId` alone, then learnt `number`: it shows
 * both, is known by exactly those two identifiers, and its events are its `contact.created` and
 * one `contact.updated` from no number to `number`, the user id unchanged. @returns the contact.
 */
export async function expectNumberLearnt(
  key: string,
  id: string | null | undefined,
  userId: string,
  number: string,
): Promise<Contact> {
  const shown = await shownContact(key, id);
  expect(shown).toMatchObject({ phone_number: number, user_id: userId });
  expect(identifiersOf(shown)).toEqual([
    ["phone_number", number],
    ["user_id", userId],
  ]);
  const events = await contactEvents(key);
  expect(events.map((e) => e.type)).toEqual(["contact.created", "contact.updated"]);
  const update = events[1]?.data as { contact: ContactRef; previous: ContactRef };
  expect([update.previous.phone_number, update.contact.phone_number]).toEqual([null, number]);
  expect([update.previous.user_id, update.contact.user_id]).toEqual([userId, userId]);
  return shown;
}

/**
 * Asserts the account's opt-outs by keyword: `STOP` from the contact of user id `userId` listed
 * by that id and, when given, by `number`, the number the contact gained later, which joined the
 * list with the STOP's row, its time included (db/queries/opt-outs.ts
 * `optOutFollowsContactStatement`). @returns the account's whole list.
 */
export async function expectStoppedBy(key: string, userId: string, number?: string): Promise<OptOut[]> {
  const listed = await optOutsOf(key);
  const stop = {
    to_number: null,
    user_id: userId,
    source: "keyword",
    keyword: "STOP",
    created_at: expect.stringMatching(TIMESTAMP),
  };
  // One time for both, so listed by address, descending: a user id (a digit or a letter first)
  // before a number ("+").
  const expected = number ? [stop, { ...stop, to_number: number, user_id: null }] : [stop];
  const byKeyword = listed.filter((o) => o.source === "keyword");
  expect(byKeyword).toEqual(expected);
  expect(new Set(byKeyword.map((o) => o.created_at)).size).toBe(1);
  if (number) {
    // Asked by the number, the list answers with that row.
    const shown = await call<{ data: OptOut }>("GET", `/v1/opt-outs/${encodeURIComponent(number)}`, { key });
    expect(shown.body.data).toEqual(byKeyword[1]);
  }
  return listed;
}

/**
 * Sends `content` from session `sessionId` to user id `userId` (`to_user_id`) and to `optedOut`, a
 * number this puts on the list through the API (`to_number`), and asserts both go alike: single
 * sends are transactional and do not read the list (docs/campaigns.md, Opt-outs), so both are `sent`, at the
 * same price.
 */
export async function expectSentLikeAnOptedOutNumber(
  key: string,
  sessionId: string,
  userId: string,
  optedOut: string,
  content: string,
): Promise<void> {
  const added = await call("POST", "/v1/opt-outs", { key, body: { to_number: optedOut } });
  expect(added.status, added.text).toBe(201);
  const byUserId = await sendToUserIds(key, sessionId, [userId], content);
  expect(byUserId.status, byUserId.text).toBe(201);
  const byNumber = await sendText(key, sessionId, [optedOut], { content, delay_between: 0 });
  expect(byNumber.status, byNumber.text).toBe(201);
  const ids = [byUserId, byNumber].map((res) => String(res.body.data.messages[0]?.id));
  const sent = await waitForMessages(key, ids);
  expect(sent.map((m) => [m.status, m.to_number])).toEqual([
    ["sent", null],
    ["sent", optedOut],
  ]);
  expect(sent[0]?.cost).toBe(sent[1]?.cost);
}

/**
 * Starts a campaign of session `sessionId` to `numbers`, every one on the account's list, and
 * asserts it skips them all (`recipient_opted_out`, nothing queued) and so completes at once.
 */
export async function expectCampaignSkips(key: string, sessionId: string, numbers: string[]): Promise<void> {
  const draft = await createCampaign(key, {
    chatapp_session_ids: [sessionId],
    content: "Sale!",
    recipients: numbers.map((to_number) => ({ to_number })),
  });
  const started = await command(key, draft.id, "start");
  expect(started.status, started.text).toBe(200);
  expect(started.body.data).toMatchObject({
    status: "completed",
    stats: { skipped: numbers.length, queued: 0 },
  });
  const recipients = await call<{ data: { to_number: string; status: string; reason: string | null }[] }>(
    "GET",
    `/v1/chatapp/campaigns/${draft.id}/recipients`,
    { key },
  );
  expect(recipients.body.data.map((r) => [r.to_number, r.status, r.reason]).sort()).toEqual(
    numbers.map((number) => [number, "skipped", "recipient_opted_out"]).sort(),
  );
}

/** A reverse OTP as `GET /v1/otp/{id}` shows it, with what these tests read. */
export interface ShownOtp {
  id: string;
  to_number: string | null;
  status: string;
  verified_number: string | null;
  verified_contact: { phone_number: string | null; user_id: string | null } | null;
  refused_messages: number;
}

/**
 * An app of `key`'s account whose one channel is session `sessionId` (docs/otp.md, Apps), for
 * reverse OTPs a contact verifies with a message. @returns its id.
 */
export async function reverseOtpApp(key: string, sessionId: string): Promise<string> {
  const res = await call<{ data: { id: string } }>("POST", "/v1/apps", {
    key,
    body: { name: "Acme", sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", channels: [sessionId] },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

/**
 * A new reverse OTP of app `appId` (`to_number` when given), with its code and the text its wa.me
 * link writes in: what the user sends.
 */
export async function createReverseOtp(
  key: string,
  appId: string,
  toNumber?: string,
): Promise<ShownOtp & { code: string; text: string }> {
  const res = await call<{ data: ShownOtp & { code: string; link: string } }>(
    "POST",
    `/v1/apps/${appId}/otp`,
    { key, body: { mode: "reverse", ...(toNumber ? { to_number: toNumber } : {}) } },
  );
  expect(res.status, res.text).toBe(201);
  const text = new URL(res.body.data.link).searchParams.get("text") ?? "";
  expect(text).toContain(res.body.data.code);
  return { ...res.body.data, text };
}

/** OTP `id` as `GET /v1/otp/{id}` shows it. */
export async function shownOtp(key: string, id: string): Promise<ShownOtp> {
  const res = await call<{ data: ShownOtp }>("GET", `/v1/otp/${id}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}
