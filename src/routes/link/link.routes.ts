import { createRoute } from "@hono/zod-openapi";
import { json, jsonBody, problems } from "../openapi";
import { PairingCodeBody, PairingCodeSchema } from "../sessions/sessions.schemas";
import { LinkReconnectedSchema, LinkTokenParam, LinkViewSchema } from "./link.schemas";

const common = { tags: ["Link"], security: [{ LinkToken: [] }] };
const tokenNote =
  " Authenticated by the link token in the path, without an API key: an unknown token is 404 `link_not_found`, an expired or revoked one 410 `link_expired`.";

const html = (description: string) => ({
  content: { "text/html": { schema: { type: "string" as const } } },
  description,
});

export const page = createRoute({
  operationId: "getLinkPage",
  ...common,
  method: "get",
  path: "/{token}",
  summary: "The hosted link page",
  description:
    "The page a link URL opens, for the phone's owner: the live QR code and the steps to scan it, linking by pairing code instead, then the linked number (and a redirect to the link's `return_url`). An unknown token is a 404 page, an expired or revoked one a 410 page, too many requests from one address a 429 page, a failure of ours a 500 page: HTML, never problem JSON.",
  request: { params: LinkTokenParam },
  responses: {
    200: html("The link page"),
    404: html("This link is not valid"),
    410: html("This link has expired"),
    429: html(
      "Too many requests from this address (the `public` rate limit): try again after `Retry-After` seconds",
    ),
    500: html("This page is not available right now (with a reference to quote)"),
  },
});

export const view = createRoute({
  operationId: "getLinkedSession",
  ...common,
  method: "get",
  path: "/{token}/session",
  summary: "The linked session's status and QR code, for the hosted link page",
  description: `The session's public view: its status, the QR code while \`pending\` with its expiry, the linked phone while \`connected\`, and the link's \`return_url\`.${tokenNote}`,
  request: { params: LinkTokenParam },
  responses: { 200: json(LinkViewSchema, "The session"), ...problems("link_not_found", "link_expired") },
});

export const pairingCode = createRoute({
  operationId: "requestLinkedPairingCode",
  ...common,
  method: "post",
  path: "/{token}/pairing-code",
  summary: "Get a pairing code for the linked session",
  description: `As \`POST /v1/chatapp/sessions/{id}/pairing-code\`.${tokenNote}`,
  request: { params: LinkTokenParam, body: jsonBody(PairingCodeBody) },
  responses: {
    200: json(PairingCodeSchema, "The pairing code"),
    ...problems(
      "link_not_found",
      "link_expired",
      "validation_failed",
      "session_not_pending",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const reconnect = createRoute({
  operationId: "reconnectLinkedSession",
  ...common,
  method: "post",
  path: "/{token}/reconnect",
  summary: "Reconnect the linked session (a fresh QR code after a timeout)",
  description: `As \`PATCH /v1/chatapp/sessions/{id}/reconnect\`: a \`disconnected\` or \`failed\` session becomes \`connected\` when the gateway still holds the link, otherwise \`pending\` with a fresh QR code.${tokenNote}`,
  request: { params: LinkTokenParam },
  responses: {
    200: json(LinkReconnectedSchema, "The reconnected or pending session"),
    ...problems(
      "link_not_found",
      "link_expired",
      "session_not_disconnected",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});
