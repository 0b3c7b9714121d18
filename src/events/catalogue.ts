/**
 * Every event type the service emits, in one place. An event is
 * `{ id: "evt_…", type, created_at, data }`, where `data` is the whole object after the change,
 * in exactly the shape its own GET returns (docs/webhooks.md, Events; the
 * `webhooks` of openapi.json give each type's payload). The types are this API's own and follow the field's
 * names (Stripe's `noun.verb` style, as WAHA's `message.ack` and Evolution's `messages.update`).
 *
 * - `message.sent` / `message.delivered` / `message.read` / `message.failed`: an outgoing
 *   message moved (src/moves/message.ts); `data` is the Message.
 * - `message.received`: a contact wrote to a session's phone; `data` is the incoming Message.
 * - `message.media_kept` / `message.media_failed`: an incoming message's media was downloaded and
 *   kept (its `media_url` now serves it), or could not be (`metadata.media_error` says why)
 *   (docs/messages.md, Incoming media); `data` is the incoming Message.
 * - `message.reaction`: a contact set, changed or took off (`emoji` "") their reaction on one of
 *   the account's messages (src/messages/reactions.ts), once per change; `data` is
 *   `{ message_id, session_id, from, emoji, at }` (docs/messages.md, Replies and reactions).
 * - `message.deleted`: a message was deleted for everyone, by the session (one it sent) or by the
 *   contact who sent it (docs/messages.md, Chat actions; src/messages/edits.ts `writeDeleted`); `data` is
 *   the Message, with `metadata.deleted_at`.
 * - `message.edited`: a text was edited, by the session (one it sent) or by the contact who sent
 *   it (src/messages/edits.ts `writeEdit`), once per edit; `data` is `{ message_id, session_id,
 *   content, previous_content, edited_at }`.
 * - `poll.voted`: a contact voted on one of the account's polls, changed their vote or took it
 *   back (`options` []) (src/messages/poll-votes.ts `receivePollVote`), once per change; `data` is
 *   `{ message_id, session_id, from, options, at }` (docs/messages.md, Sending messages → Polls).
 * - `session.status_changed`: a session moved between `pending`, `connected`, `disconnected`,
 *   `banned` and `failed`; `data` is the Session, with its `reason`.
 * - `session.qr_updated`: a pending session's QR rotated; `data` is `{ session, qr_code }`.
 * - `session.health_changed`: a session's `health` (timelock, cap on new chats, quality) changed
 *   as its gateway reported it (docs/sessions.md, Session health); `data` is the Session.
 * - `otp.verified` / `otp.failed`: an OTP was verified (by its code, or a reverse OTP by the
 *   user's message, with `verified_number`), or failed after too many wrong codes; `data` is the OTP.
 * - `campaign.started` / `campaign.completed` / `campaign.cancelled`: a campaign began sending
 *   (at start, or when a scheduled one's time came), has nothing left to send, or was cancelled
 *   (src/moves/campaign.ts); `data` is the Campaign with its statistics at that moment.
 * - `account.balance_low`: a charge took the balance from at least the account's
 *   `low_balance_threshold` to below it (src/billing/ledger.ts); once per crossing: it is recorded
 *   again only after a credit or refund has lifted the balance back to the threshold or above and
 *   a charge crosses it again. `data` is the Account as `GET /v1/account` shows it after the charge.
 *
 * - `template.status_changed`: Meta's review moved a Cloud API session's message template (its
 *   `message_template_status_update` webhook, src/gateways/cloud-api/template-status.ts); once
 *   per account and change. `data` is `{ template, reason, chatapp_session_ids }`: the template as
 *   `GET /v1/chatapp/sessions/{id}/templates` lists it, Meta's reason (or null), and the
 *   account's sessions of that business account.
 *
 * - `contact.created` / `contact.updated`: a session met a new contact (their first message), or
 *   learnt something new of one: a phone number for a user known by id, a new BSUID, a username
 *   or name (src/contacts/learn.ts; docs/contacts.md, Contacts). `data` is the Contact
 *   (`GET /v1/contacts/{id}`), and for `contact.updated` `{ contact, previous }`, the Contact before
 *   the change. They need `messages:read`, as the messages that carry them do.
 * - `contact.erased`: an erasure of everything the account held about a contact completed
 *   (src/erasures/erase.ts; docs/contacts.md, Erasure); `data` is the Erasure (`GET /v1/erasures/{id}`),
 *   which names the contact only by the hash of its address.
 *
 * Each type names the scope that reads it ({@link EVENT_READ_SCOPE}): the scope of its object's own
 * GET, since the event carries that object whole. A key sees in `GET /v1/events`, and subscribes a
 * webhook endpoint to, only the types whose scope it holds (src/keys/event-access.ts).
 */
export const EVENT_TYPES = [
  "message.sent",
  "message.delivered",
  "message.read",
  "message.failed",
  "message.received",
  "message.media_kept",
  "message.media_failed",
  "message.reaction",
  "session.status_changed",
  "session.qr_updated",
  "session.health_changed",
  "otp.verified",
  "otp.failed",
  "campaign.started",
  "campaign.completed",
  "campaign.cancelled",
  "account.balance_low",
  "template.status_changed",
  "contact.created",
  "contact.updated",
  "contact.erased",
  "message.deleted",
  "message.edited",
  "poll.voted",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The scopes that read an event type (src/keys/scopes.ts, where src/keys/event-access.ts checks
 * each is one): the events floor sits below the keys floor, so the names are spelt out here.
 */
export type EventReadScope =
  | "messages:read"
  | "sessions:read"
  | "otp:read"
  | "campaigns:read"
  | "account:read"
  | "erasures:read";

/**
 * The scope a key needs to read each event type, in `GET /v1/events` and through a webhook
 * endpoint: the scope of the GET that shows its `data`. Messages (incoming text included) are
 * `GET /v1/chatapp/messages/{id}` (`messages:read`, which the send-only `messages:send` does not
 * grant); sessions and their QR codes `GET /v1/chatapp/sessions/{id}[/qr-code]` (`sessions:read`);
 * one-time codes `GET /v1/otp/{id}` (`otp:read`); campaigns `GET /v1/chatapp/campaigns/{id}`
 * (`campaigns:read`); the account `GET /v1/account` (`account:read`); erasures
 * `GET /v1/erasures/{id}` (`erasures:read`).
 */
export const EVENT_READ_SCOPE: Record<EventType, EventReadScope> = {
  "message.sent": "messages:read",
  "message.delivered": "messages:read",
  "message.read": "messages:read",
  "message.failed": "messages:read",
  "message.received": "messages:read",
  "message.media_kept": "messages:read",
  "message.media_failed": "messages:read",
  "message.reaction": "messages:read",
  "session.status_changed": "sessions:read",
  "session.qr_updated": "sessions:read",
  "session.health_changed": "sessions:read",
  "otp.verified": "otp:read",
  "otp.failed": "otp:read",
  "campaign.started": "campaigns:read",
  "campaign.completed": "campaigns:read",
  "campaign.cancelled": "campaigns:read",
  "account.balance_low": "account:read",
  "template.status_changed": "sessions:read",
  "contact.created": "messages:read",
  "contact.updated": "messages:read",
  "contact.erased": "erasures:read",
  "message.deleted": "messages:read",
  "message.edited": "messages:read",
  "poll.voted": "messages:read",
};

/**
 * The event `POST /v1/webhooks/{id}/test` sends to check a receiver: `data` is the endpoint as its
 * GET shows it. It is not one of {@link EVENT_TYPES}: never stored, listed or subscribed to.
 */
export const TEST_EVENT_TYPE = "webhook.test";
