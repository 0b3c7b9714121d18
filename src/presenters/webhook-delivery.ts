import type { DeliveryHistory } from "../db/queries/webhook-deliveries";
import type { EventType } from "../events/catalogue";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";

/**
 * A delivery with its attempts as the API shows it (`WebhookDelivery` in the OpenAPI document):
 * timestamps formatted, attempts oldest first.
 */
export function toDeliveryRecord({ delivery, attempts }: DeliveryHistory) {
  return {
    event_id: delivery.eventId,
    // Written with the row at the first attempt, the event's catalogue type.
    event_type: delivery.eventType as EventType,
    endpoint_id: delivery.endpointId,
    status: delivery.status,
    next_attempt_at: delivery.status === "pending" ? formatNullableTimestamp(delivery.nextAttemptAt) : null,
    created_at: formatTimestamp(delivery.createdAt),
    updated_at: formatTimestamp(delivery.updatedAt),
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attempted_at: formatTimestamp(attempt.attemptedAt),
      status_code: attempt.statusCode,
      duration_ms: attempt.durationMs,
      response_excerpt: attempt.responseExcerpt,
      error: attempt.error,
    })),
  };
}
