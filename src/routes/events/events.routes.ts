import { createRoute } from "@hono/zod-openapi";
import { json, problems, requires } from "../openapi";
import {
  EVENT_SCOPES_NOTE,
  EventEnvelopeSchema,
  EventIdParam,
  EventListQuery,
  EventListSchema,
} from "./events.schemas";

const common = { tags: ["Events"] };

export const list = createRoute({
  operationId: "listEvents",
  ...requires("events:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's events",
  description:
    "Every state change of the account's messages, sessions and one-time codes, newest first, kept 30 days: " +
    "the pull side of webhooks, from which a receiver that was down can catch up. Cursor-paged like the message list. " +
    `A key sees only the event types whose read scope it holds (${EVENT_SCOPES_NOTE}): ` +
    "without `filter[type]` the others are left out; a `filter[type]` naming one of them is 403 `insufficient_scope`, naming the scope.",
  request: { query: EventListQuery },
  responses: {
    200: json(EventListSchema, "A page of events"),
    ...problems("unauthenticated", "insufficient_scope", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getEvent",
  ...requires("events:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show an event",
  description:
    "An event of a type whose read scope the key does not hold (as in the list) is 403 `insufficient_scope`, naming the scope.",
  request: { params: EventIdParam },
  responses: {
    200: json(EventEnvelopeSchema, "The event"),
    ...problems("unauthenticated", "insufficient_scope", "not_found"),
  },
});
