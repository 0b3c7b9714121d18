import { createRoute } from "@hono/zod-openapi";
import { json, problems, requires } from "../openapi";
import { EventEnvelopeSchema, EventIdParam, EventListQuery, EventListSchema } from "./events.schemas";

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
    "the pull side of webhooks, from which a receiver that was down can catch up. Cursor-paged like the message list.",
  request: { query: EventListQuery },
  responses: {
    200: json(EventListSchema, "A page of events"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getEvent",
  ...requires("events:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show an event",
  request: { params: EventIdParam },
  responses: { 200: json(EventEnvelopeSchema, "The event"), ...problems("unauthenticated", "not_found") },
});
