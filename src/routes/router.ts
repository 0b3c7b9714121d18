import { OpenAPIHono } from "@hono/zod-openapi";
import type { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError, type FieldErrors } from "../errors";

type ValidationResult = { success: true } | { success: false; error: z.ZodError; target: string };

/**
 * Turns a failed request validation into our error: a malformed path parameter cannot name an
 * existing resource, so it is 404 `not_found`; anything else is 422 `validation_failed` with
 * `errors` keyed by field path (`to_number.2`), or for the query by parameter name (`filter[status]`).
 */
function validationHook(result: ValidationResult): void {
  if (result.success) return;
  if (result.target === "param") throw new ApiError("not_found", "No such resource.");
  if (result.target === "query") {
    throw new ApiError("validation_failed", "The query has invalid parameters.", {
      fields: fieldErrors(result.error, "unknown parameter"),
    });
  }
  throw new ApiError("validation_failed", "The request has invalid fields.", {
    fields: fieldErrors(result.error),
  });
}

/**
 * Zod issues → `{ "field.path": [messages] }` (the problem's `errors`); unknown keys are reported
 * under their own path with the `unknown` message.
 */
export function fieldErrors(error: z.ZodError, unknown = "unknown field"): FieldErrors {
  // No prototype: a client's field named `__proto__` must become a key, not reach Object.prototype.
  const fields: FieldErrors = Object.create(null);
  const add = (path: string, message: string) => {
    fields[path || "body"] = [...(fields[path || "body"] ?? []), message];
  };
  for (const issue of error.issues) {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) add(path ? `${path}.${key}` : key, unknown);
    } else {
      add(path, issue.message);
    }
  }
  return fields;
}

/**
 * A router whose request validation renders our problem details. Every resource uses one, and so
 * does the app that mounts them. `strict: false`: a path with a trailing slash is routed as the
 * same path without it (`/v1/chatapp/sessions/` is `/v1/chatapp/sessions`), so routing and the
 * 405 middleware (which matches paths with or without it) never disagree about a path.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook, strict: false });
}
