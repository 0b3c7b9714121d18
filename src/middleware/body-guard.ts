import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";

/** Largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Hono's body-limit middleware at {@link MAX_BODY_BYTES}: a declared `Content-Length` over it, or
 * a streamed body that grows past it, is 413 `payload_too_large` (thrown, so `onError` renders the
 * problem). Hono buffers a streamed body as it counts it, so what runs after reads the bytes it
 * counted.
 */
export const bodyLimit = honoBodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
  },
});

/**
 * Checks every request body before routing (after {@link bodyLimit}, which bounds what it reads):
 * an empty (or blank) body is treated as absent; a non-empty body that is not JSON → 415
 * `unsupported_media_type`; unparseable JSON → 400 `invalid_json`. It reads a clone, so the route
 * validators still read the original body.
 */
export const bodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return next();
  const text = await c.req.raw.clone().text();
  if (text.trim() === "") {
    if (!c.req.header("content-type")) return next();
    // An empty body is no body: without this, `Content-Type: application/json` and nothing else
    // (curl -H … without -d) would fail the JSON parser of a route whose body is optional.
    const headers = new Headers(c.req.raw.headers);
    headers.delete("content-type");
    headers.delete("content-length");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
    return next();
  }
  if (!JSON_MEDIA_TYPE.test(c.req.header("content-type") ?? "")) {
    throw new ApiError(
      "unsupported_media_type",
      "Request bodies must be JSON (Content-Type: application/json).",
    );
  }
  try {
    JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid JSON.");
  }
  return next();
});
