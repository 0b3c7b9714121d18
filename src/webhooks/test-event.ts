import type { WebhookEndpointRow } from "../db/queries/webhook-endpoints";
import { TEST_EVENT_TYPE } from "../events/catalogue";
import { newEventId } from "../events/record";
import { formatTimestamp } from "../lib/time";
import { DELIVERY_TIMEOUT_MS, type PostResult, postEvent } from "./post";
import { withOpenSecrets } from "./secret";

/** A `webhook.test` event as posted: the usual `{ id, type, created_at, data }`. */
export interface TestEvent<Data> {
  id: string;
  type: typeof TEST_EVENT_TYPE;
  created_at: string;
  data: Data;
}

/**
 * Posts a fresh `webhook.test` event with `data` (the endpoint as its GET shows it) to `endpoint`
 * now, signed like every delivery, and waits for the answer (at most {@link DELIVERY_TIMEOUT_MS}).
 * The event is not stored and the attempt not recorded: it tests the receiver, it delivers
 * nothing, and it is sent whether or not the endpoint is enabled or subscribed. The endpoint's
 * secrets are opened from `env` for the signature (secret.ts `withOpenSecrets`, which throws when
 * one does not open).
 *
 * @returns the event sent and what the receiver answered.
 */
export async function sendTestEvent<Data>(
  env: Env,
  endpoint: WebhookEndpointRow,
  data: Data,
  options: { now?: () => number; timeoutMs?: number } = {},
): Promise<{ event: TestEvent<Data>; attemptedAt: number; result: PostResult }> {
  const now = options.now ?? Date.now;
  const attemptedAt = now();
  const event: TestEvent<Data> = {
    id: newEventId(),
    type: TEST_EVENT_TYPE,
    created_at: formatTimestamp(attemptedAt),
    data,
  };
  const result = await postEvent(
    await withOpenSecrets(env, endpoint),
    event.id,
    JSON.stringify(event),
    attemptedAt,
    {
      now,
      timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    },
  );
  return { event, attemptedAt, result };
}
