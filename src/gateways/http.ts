import type { z } from "zod";
import { readTextPrefix } from "../lib/body";
import { GatewayError, type SendOutcome } from "./gateway";

/** Where and how to reach a gateway's HTTP API. */
export interface GatewayHttp {
  /** Base URL without a trailing slash, e.g. `http://waha:3000`. */
  baseUrl: string;
  /** Headers sent with every call (the API key). */
  headers: Record<string, string>;
  /** Milliseconds a call may take before it counts as a transient failure. */
  timeoutMs: number;
  /** Milliseconds a media send may take (`GATEWAY_MEDIA_TIMEOUT_MS`): gateways may convert it first. */
  mediaTimeoutMs: number;
}

/** One call: method, path (with its query string) and an optional JSON body. */
export interface GatewayCall<S extends z.ZodType | undefined> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  /** Shape the 2xx response must have; without it the response body is discarded. */
  schema?: S;
  /** This call's timeout in ms, instead of the gateway's `timeoutMs`. */
  timeoutMs?: number;
}

/**
 * Calls a gateway's HTTP API and returns the parsed 2xx response.
 * @throws GatewayError transient (`permanent: false`) when the gateway is unreachable
 *   (`gateway_unreachable`), does not answer within `timeoutMs` (`gateway_timeout`), answers
 *   408, 429 or 5xx (`gateway_http_<status>`) or answers a shape other than `schema`
 *   (`gateway_bad_response`); permanent for any other 4xx (`gateway_http_<status>`, the
 *   response text in the message).
 */
export async function gatewayRequest<S extends z.ZodType | undefined = undefined>(
  http: GatewayHttp,
  call: GatewayCall<S>,
): Promise<S extends z.ZodType ? z.output<S> : undefined> {
  let response: Response;
  try {
    response = await fetch(`${http.baseUrl}${call.path}`, {
      method: call.method,
      headers: {
        Accept: "application/json",
        ...(call.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...http.headers,
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: AbortSignal.timeout(call.timeoutMs ?? http.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    throw new GatewayError(
      timedOut ? "gateway_timeout" : "gateway_unreachable",
      false,
      null,
      `${call.method} ${call.path}${timedOut ? "" : `: ${String(error)}`}`,
    );
  }
  if (!response.ok) {
    const text = await readTextPrefix(response, MAX_ERROR_BODY_BYTES);
    const transient = response.status >= 500 || response.status === 408 || response.status === 429;
    throw new GatewayError(
      `gateway_http_${response.status}`,
      !transient,
      response.status,
      `${call.method} ${call.path}${text ? `: ${text.slice(0, 300)}` : ""}`,
      parseOrText(text),
    );
  }
  if (!call.schema) {
    await response.body?.cancel();
    return undefined as S extends z.ZodType ? z.output<S> : undefined;
  }
  const parsed = call.schema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    throw new GatewayError("gateway_bad_response", false, response.status, `${call.method} ${call.path}`);
  }
  return parsed.data as S extends z.ZodType ? z.output<S> : undefined;
}

/** Most of an error body kept for classifying it (64 KiB); the rest is not read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** `text` as JSON when it parses, else the text itself. */
function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The outcome of a send call that threw: a permanent {@link GatewayError} (the gateway refused the
 * request with a 4xx) is `rejected`, and so, retryable, is a 408 or 429; anything else (timeout,
 * unreachable, 5xx, an answer we cannot read) may have been sent and is `unknown`.
 */
export function sendFailure(error: unknown): SendOutcome {
  if (error instanceof GatewayError && error.permanent) {
    return { outcome: "rejected", reason: error.message, retryable: false };
  }
  // 408 and 429: the gateway turned the request away unprocessed (RFC 9110 §15.5.9, RFC 6585 §4).
  if (error instanceof GatewayError && (error.status === 408 || error.status === 429)) {
    return { outcome: "rejected", reason: error.message, retryable: true };
  }
  return { outcome: "unknown", reason: error instanceof Error ? error.message : String(error) };
}

/**
 * The outcome of a call that threw before the send request was made (a lookup that precedes it):
 * nothing was sent, so it is `rejected`, and retryable unless the gateway refused it with a 4xx.
 */
export function notSent(error: unknown): SendOutcome {
  const permanent = error instanceof GatewayError && error.permanent;
  return {
    outcome: "rejected",
    reason: error instanceof Error ? error.message : String(error),
    retryable: !permanent,
  };
}
