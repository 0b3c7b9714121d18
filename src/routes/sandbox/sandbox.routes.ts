import { createRoute } from "@hono/zod-openapi";
import { MessageEnvelopeSchema } from "../messages/messages.schemas";
import { IdParam, json, jsonBody, problems, publicOperation, requires } from "../openapi";
import { SessionEnvelopeSchema } from "../sessions/sessions.schemas";
import {
  BanBody,
  DropBody,
  HealthBody,
  InboundBody,
  InboundReactionBody,
  PairParam,
  PhoneBody,
  PhoneEnvelope,
  ReceivedEnvelope,
  ReceivedQuery,
  ScanBody,
} from "./sandbox.schemas";

const common = { tags: ["Sandbox"] };
const sandboxNote = " Exists only while the embedded sandbox gateway is active (`CHATAPP_GATEWAY=sandbox`).";
const optionalBody = <T extends Parameters<typeof jsonBody>[0]>(schema: T) => ({
  ...jsonBody(schema),
  required: false,
});

export const scan = createRoute({
  operationId: "scanSandboxSession",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/scan",
  summary: "Link a pending session as a phone scanning its QR would",
  description: `Moves a pending session to \`connected\`, as a scan of its QR code would; with \`pairing_code\`, as the phone entering that code would (the phone it was issued for links).${sandboxNote}`,
  request: { params: IdParam, body: optionalBody(ScanBody) },
  responses: {
    200: json(SessionEnvelopeSchema, "The connected session"),
    ...problems("not_found", "session_not_pending", "validation_failed", "pairing_code_invalid"),
  },
});

export const drop = createRoute({
  operationId: "dropSandboxSession",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/drop",
  summary: "Simulate the network dropping a connected session",
  description: `Moves a connected session to \`disconnected\` with the reason given.${sandboxNote}`,
  request: { params: IdParam, body: optionalBody(DropBody) },
  responses: {
    200: json(SessionEnvelopeSchema, "The disconnected session"),
    ...problems("not_found", "session_not_connected", "validation_failed"),
  },
});

export const ban = createRoute({
  operationId: "banSandboxSession",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/ban",
  summary: "Simulate the network banning the linked account",
  description: `Moves a connected or disconnected session to \`banned\`.${sandboxNote}`,
  request: { params: IdParam, body: optionalBody(BanBody) },
  responses: {
    200: json(SessionEnvelopeSchema, "The banned session"),
    ...problems("not_found", "session_not_linked", "validation_failed"),
  },
});

export const health = createRoute({
  operationId: "updateSandboxSessionHealth",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/health",
  summary: "Simulate the network limiting the linked account (timelock, cap, quality)",
  description: `Sets the session's \`health\` as a real gateway's reading would (docs/sessions.md, Session health): every field, a null clearing it; \`checked_at\` becomes now. A change records \`session.health_changed\` and sends its live frame; a timelock active or a cap \`CAPPED\` refuses single sends to cold contacts (409 \`session_limited\`).${sandboxNote}`,
  request: { params: IdParam, body: jsonBody(HealthBody) },
  responses: {
    200: json(SessionEnvelopeSchema, "The session with its health"),
    ...problems("not_found", "validation_failed"),
  },
});

export const inbound = createRoute({
  operationId: "receiveSandboxMessage",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/inbound",
  summary: "Simulate a contact sending a message to the session's phone",
  description: `Stores an \`incoming\` message (status \`delivered\`, cost 0) on a connected session. As through a real gateway, a text holding the code of one of the session's pending reverse OTPs verifies it (docs/otp.md, Reverse OTP). A \`poll_vote\` stores no message: it is the contact's vote on the poll \`reply_to\` names, kept in its \`metadata.poll_votes\` and \`metadata.poll_counts\` with one \`poll.voted\` event per change, as a gateway's vote is (docs/messages.md, Sending messages → Polls), and the answer is that poll (200).${sandboxNote}`,
  request: { params: IdParam, body: jsonBody(InboundBody) },
  responses: {
    200: json(MessageEnvelopeSchema, "A `poll_vote`: the poll voted on, with its votes"),
    201: json(MessageEnvelopeSchema, "The stored incoming message"),
    ...problems(
      "not_found",
      "session_not_connected",
      "validation_failed",
      "reply_to_not_found",
      "reply_to_other_chat",
      "reply_to_not_sent",
    ),
  },
});

export const inboundReaction = createRoute({
  operationId: "receiveSandboxReaction",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/reactions",
  summary: "Simulate a contact reacting to a message of their chat",
  description: `The contact \`from_number\` sets \`emoji\` on message \`message_id\` (one the session sent them or received from them), or takes their reaction off with \`""\`, as a real gateway's webhook reports it: the message's \`metadata.reactions\` holds one entry per contact, and each change records a \`message.reaction\` event (docs/messages.md, Replies and reactions). Setting the emoji the contact already set changes nothing.${sandboxNote}`,
  request: { params: IdParam, body: jsonBody(InboundReactionBody) },
  responses: {
    200: json(MessageEnvelopeSchema, "The message reacted to, with its reactions"),
    ...problems(
      "not_found",
      "session_not_connected",
      "validation_failed",
      "reply_to_not_found",
      "reaction_other_chat",
      "reply_to_not_sent",
    ),
  },
});

export const received = createRoute({
  operationId: "listSandboxReceivedMessages",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/sessions/{id}/received",
  summary: "Read what a recipient's phone received from the session",
  description: `The messages the session sent to \`to_number\` as that phone shows them, newest first (the last 50). One-time codes are masked (\`•\` per digit) as the message shows them: the phone holds the code, the API never shows it. A deployment that sets \`SANDBOX_SHOW_CODES=true\` (local development only) shows them in clear here.${sandboxNote}`,
  request: { params: IdParam, query: ReceivedQuery },
  responses: {
    200: json(ReceivedEnvelope, "The received messages"),
    ...problems("not_found", "validation_failed"),
  },
});

const phoneNote =
  "While the phone is offline, messages the session sends still end `sent` but get no `delivered` or `read` ack (acks that fall due meanwhile are held), so a failover on a missing delivery ack can be tried. When it comes back online, every message whose ack was held is acked as if the phone received it at that moment: `delivered` after `SANDBOX_DELIVERED_MS` (default 1 s) and `read` after `SANDBOX_READ_MS` (default 3 s). The state is kept with the session and survives restarts; a new session's phone is online. Incoming messages (`/inbound`) are not affected.";

export const setPhone = createRoute({
  operationId: "updateSandboxPhone",
  ...requires("sessions:write"),
  ...common,
  method: "post",
  path: "/sessions/{id}/phone",
  summary: "Take the session's sandbox phone offline or back online",
  description: `${phoneNote}${sandboxNote}`,
  request: { params: IdParam, body: jsonBody(PhoneBody) },
  responses: {
    200: json(PhoneEnvelope, "The phone's state now"),
    ...problems("not_found", "validation_failed"),
  },
});

export const showPhone = createRoute({
  operationId: "showSandboxPhone",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/sessions/{id}/phone",
  summary: "Whether the session's sandbox phone is online",
  description: `See \`POST /sandbox/sessions/{id}/phone\`.${sandboxNote}`,
  request: { params: IdParam },
  responses: {
    200: json(PhoneEnvelope, "The phone's state"),
    ...problems("not_found"),
  },
});

const html = (description: string) => ({
  content: { "text/html": { schema: { type: "string" as const } } },
  description,
});

export const pairPage = createRoute({
  operationId: "showSandboxPairPage",
  ...publicOperation,
  tags: ["Sandbox"],
  method: "get",
  path: "/pair/{token}",
  summary: "Pairing page a sandbox QR code points at",
  description: `Open the QR's URL (e.g. with a phone's camera) and tap the button to link the session.${sandboxNote}`,
  request: { params: PairParam },
  responses: { 200: html("The pairing page"), 404: html("Unknown or expired QR code") },
});

export const pair = createRoute({
  operationId: "pairSandboxSession",
  ...publicOperation,
  tags: ["Sandbox"],
  method: "post",
  path: "/pair/{token}",
  summary: "Link the session of a sandbox QR code",
  request: { params: PairParam },
  responses: {
    200: html("Linked"),
    404: html("Unknown or expired QR code"),
    409: html("Session not pending"),
  },
});
