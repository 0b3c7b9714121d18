import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";

/** Largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Checks every request body before routing: over {@link MAX_BODY_BYTES} → 413
 * `payload_too_large`; an empty (or blank) body is treated as absent; a non-empty body that is not
 * JSON → 415 `unsupported_media_type`;
 * unparseable JSON → 400 `invalid_json`. It reads a clone, so the route validators still read
 * the original body.
 */
export const bodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return next();
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await readLimited(c.req.raw.clone(), MAX_BODY_BYTES);
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

function tooLarge(): ApiError {
  return new ApiError("payload_too_large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);
}

async function readLimited(request: Request, limit: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(joined);
}
