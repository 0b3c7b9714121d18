import type { WebhookEndpointRow } from "../db/queries/webhook-endpoints";
import { readTextPrefix } from "../lib/body";
import { signedHeaders } from "./sign";

/** A receiver has this long (15 s) to answer with a 2xx; anything later is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** Bytes of a response body kept with its attempt (1 KiB). */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** What one POST of an event got back. */
export interface PostResult {
  /** The HTTP status, or null when no answer came (timeout, refused, DNS). */
  statusCode: number | null;
  /** The first {@link RESPONSE_EXCERPT_BYTES} of the body as UTF-8; null when empty or unanswered. */
  excerpt: string | null;
  /** Why no answer came, e.g. `timeout: no answer within 15000 ms`; null when one came. */
  error: string | null;
  /** The answer's `Retry-After` header, as sent. */
  retryAfter: string | null;
  /** From the start of the request to the end of the excerpt, in ms. */
  durationMs: number;
}

/** Whether a {@link PostResult} acknowledges the event: a 2xx (Standard Webhooks, "Delivery"). */
export const acknowledged = (result: Pick<PostResult, "statusCode">): boolean =>
  result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;

/**
 * POSTs one event to `endpoint.url`: `payload` is the event's JSON exactly as sent, signed for
 * message id `eventId` at `startedAt` (epoch ms) by {@link signedHeaders}. Redirects are not
 * followed (a 3xx is a failed attempt, as the Standard Webhooks spec advises); an answer later than
 * `timeoutMs` is a timeout. Never throws: every outcome is a {@link PostResult}.
 */
export async function postEvent(
  endpoint: Pick<WebhookEndpointRow, "url" | "secret" | "previousSecret" | "previousSecretExpiresAt">,
  eventId: string,
  payload: string,
  startedAt: number,
  options: { now: () => number; timeoutMs: number },
): Promise<PostResult> {
  const finish = (answer: Omit<PostResult, "durationMs">): PostResult => ({
    ...answer,
    durationMs: Math.max(options.now() - startedAt, 0),
  });
  try {
    const response = await fetch(endpoint.url, {
      method: "POST",
      headers: signedHeaders(endpoint, eventId, payload, startedAt),
      body: payload,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const excerpt = (await readTextPrefix(response, RESPONSE_EXCERPT_BYTES)) || null;
    return finish({
      statusCode: response.status,
      excerpt,
      error: null,
      retryAfter: response.headers.get("Retry-After"),
    });
  } catch (cause) {
    return finish({
      statusCode: null,
      excerpt: null,
      error: describe(cause, options.timeoutMs),
      retryAfter: null,
    });
  }
}

function describe(cause: unknown, timeoutMs: number): string {
  if (cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError"))
    return `timeout: no answer within ${timeoutMs} ms`;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
}
