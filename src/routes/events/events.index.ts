import type { OpenAPIHono } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../events/catalogue";
import { jsonBody, webhookSecurity } from "../openapi";
import { createRouter } from "../router";
import * as handlers from "./events.handlers";
import * as routes from "./events.routes";
import { typedEventSchema } from "./events.schemas";

/** `/v1/events`: the account's events (src/events/catalogue.ts), newest first. */
export const eventRoutes = createRouter()
  .openapi(routes.list, handlers.list)
  .openapi(routes.show, handlers.show);

/** `message.read` → `onMessageRead`: the operation id of an event's entry in `webhooks`. */
export function eventOperationId(type: string): string {
  return `on${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}`;
}

/**
 * Lists every event type with its payload in the document's top-level `webhooks` (OpenAPI 3.1
 * §4.8.1), from the same schemas the event list uses: what a webhook endpoint receives.
 */
export function registerEventWebhooks(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const type of EVENT_TYPES) {
    registry.registerWebhook({
      operationId: eventOperationId(type),
      method: "post",
      path: type,
      tags: ["Events"],
      security: webhookSecurity,
      summary: `The \`${type}\` event`,
      description:
        "Delivered to webhook endpoints subscribed to this type, signed per Standard Webhooks, and listed by `GET /v1/events`.",
      request: { body: jsonBody(typedEventSchema(type)) },
      responses: { 200: { description: "Any 2xx answer within 15 seconds acknowledges the delivery." } },
    });
  }
}
