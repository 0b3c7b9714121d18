import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../../events/catalogue";
import { MAX_ATTEMPTS } from "../../webhooks/schedule";
import { eventIdPathParam } from "../events/events.schemas";
import { IdParam } from "../openapi";
import { CursorParam, enumListFilter, Limit, PageLinksSchema, TimeBound } from "../paging";
import { WebhookEndpointSchema } from "./webhooks.schemas";

const STATUSES = ["pending", "succeeded", "failed"] as const;
const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** `{ id, event_id }`: an endpoint and one of its deliveries; malformed ids are answered 404. */
export const DeliveryParams = IdParam.extend({ event_id: eventIdPathParam("event_id") });

/** Query of `GET /v1/webhooks/{id}/deliveries`. */
export const DeliveryListQuery = z.object({
  "filter[status]": enumListFilter(STATUSES, "Delivery statuses").optional(),
  limit: Limit,
  cursor: CursorParam.optional(),
});

const attemptFields = {
  attempted_at: timestamp.openapi({ description: "When the request was sent." }),
  status_code: z.int().nullable().openapi({
    description: "The receiver's HTTP status; null when no answer came (see `error`).",
    example: 200,
  }),
  duration_ms: z
    .int()
    .openapi({ description: "From sending the request to reading the answer, in ms.", example: 84 }),
  response_excerpt: z.string().nullable().openapi({
    description: "The first 1 KiB of the answer's body (UTF-8); null when it was empty or none came.",
    example: '{"received":true}',
  }),
  error: z.string().nullable().openapi({
    description: "Why no answer came (a timeout after 15 s, a refused connection…); null when one came.",
    example: null,
  }),
};

export const WebhookAttemptSchema = z
  .object({
    attempt: z
      .int()
      .min(1)
      .openapi({
        description: `The attempt's number in its delivery: 1 for the first. Attempts 1–${MAX_ATTEMPTS} follow the retry schedule; a retry through the API adds one.`,
        example: 1,
      }),
    ...attemptFields,
  })
  .openapi("WebhookAttempt");

export const WebhookDeliverySchema = z
  .object({
    event_id: z.string().openapi({ example: "evt_3f2c9a7e1b6d4c08a5e97d2b1f04c6aa" }),
    event_type: z.enum(EVENT_TYPES).openapi({ description: "The event's type." }),
    endpoint_id: z.uuid(),
    status: z.enum(STATUSES).openapi({
      description:
        "`pending` until an attempt gets a 2xx (`succeeded`), or until the retries run out or the endpoint answers 410 (`failed`).",
    }),
    next_attempt_at: timestamp.nullable().openapi({
      description: "While `pending`: when the next attempt is due. Null otherwise.",
    }),
    created_at: timestamp.openapi({
      description: "The event's time (`created_at` of the event); deliveries are listed by it.",
    }),
    updated_at: timestamp.openapi({ description: "The delivery's last change." }),
    attempts: z.array(WebhookAttemptSchema).openapi({
      description: "Every attempt made, oldest first (attempt records are kept 30 days).",
    }),
  })
  .openapi("WebhookDelivery");

export const WebhookDeliveryEnvelopeSchema = z.object({
  success: z.literal(true),
  data: WebhookDeliverySchema,
});

export const WebhookDeliveryListSchema = z
  .object({ success: z.literal(true), data: z.array(WebhookDeliverySchema), ...PageLinksSchema })
  .openapi("WebhookDeliveryList");

export const RecoverBody = z.strictObject({
  since: TimeBound.openapi({
    type: "string",
    maxLength: 64,
    description:
      "Re-send the failed deliveries of events created at or after this time (an ISO 8601 date-time or date, UTC).",
    example: "2026-11-20T00:00:00Z",
  }),
});

export const RecoverySchema = z
  .object({
    since: timestamp.openapi({ description: "The `since` asked for." }),
    deliveries: z.int().min(0).openapi({
      description:
        "How many failed deliveries are now `pending` again and queued to be sent (at most 10,000 a call).",
      example: 12,
    }),
    more: z.boolean().openapi({
      description: "True when the call reached its 10,000: call again with the same `since` for the rest.",
      example: false,
    }),
  })
  .openapi("WebhookRecovery");

export const RecoveryEnvelopeSchema = z.object({ success: z.literal(true), data: RecoverySchema });

export const TestEventSchema = z
  .object({
    id: z.string().openapi({ example: "evt_7d1e0b9c2a5f4e3d8c6b1a0f9e8d7c6b" }),
    type: z.literal(TEST_EVENT_TYPE),
    created_at: timestamp,
    data: WebhookEndpointSchema,
  })
  .openapi("WebhookTestEvent");

export const TestResultSchema = z
  .object({
    succeeded: z.boolean().openapi({ description: "Whether the receiver answered 2xx within 15 seconds." }),
    event: TestEventSchema.openapi({ description: "The event posted, exactly as the receiver got it." }),
    ...attemptFields,
  })
  .openapi("WebhookTestResult");

export const TestResultEnvelopeSchema = z.object({ success: z.literal(true), data: TestResultSchema });
