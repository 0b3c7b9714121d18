import { expect } from "vitest";
import { call } from "./helpers";

// Reading contacts back through the API (README, Contacts), as the contact tests of every gateway
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
