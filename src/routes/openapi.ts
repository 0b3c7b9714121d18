import { z } from "@hono/zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "../errors";
import { toE164 } from "../lib/phone";

/** RFC 9457 problem details, as every error response renders them (errors.ts). */
export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "tag:chatapp-otp-api,2026:problems/validation_failed" }),
    title: z.string().openapi({ example: "Validation failed" }),
    status: z.number().int().openapi({ example: 422 }),
    detail: z.string(),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    request_id: z.string(),
    success: z.literal(false),
    attempts_remaining: z
      .int()
      .optional()
      .openapi({ description: "`otp_invalid`: wrong codes still allowed." }),
    sends_remaining: z
      .int()
      .optional()
      .openapi({ description: "`rate_limited` on an OTP resend: codes it may still send." }),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .openapi({
        description: "Field path → messages (validation failures only).",
        example: { "to_number.2": ["invalid phone number"] },
      }),
  })
  .openapi("Problem");

/**
 * OpenAPI `responses` entries for the given error codes, grouped by status, each documented as
 * `application/problem+json`. Every route also implicitly answers 401, 413, 415 and 500.
 */
export function problems(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: Record<
    number,
    { description: string; content: { "application/problem+json": { schema: typeof ProblemSchema } } }
  > = {};
  for (const [status, list] of byStatus) {
    responses[status] = {
      description: `Problem: ${list.map((c) => `\`${c}\``).join(", ")}`,
      content: { "application/problem+json": { schema: ProblemSchema } },
    };
  }
  return responses;
}

/** `{ content: { "application/json": { schema } }, description }` for a JSON response or body. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

/** A JSON request body that must be present. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { content: { "application/json": { schema } }, required: true };
}

/** `{ id }` path parameter holding a uuid. A malformed id is answered 404, like an unknown one. */
export const IdParam = z.object({
  id: z
    .uuid()
    .openapi({ param: { name: "id", in: "path" }, example: "0f8fad5b-d9cb-469f-a165-70867728950e" }),
});

/** Security requirement for `/v1` routes. */
export const bearerSecurity = [{ ApiKey: [] }];

/** A phone number in international format, normalised to E.164. */
export const PhoneNumber = z
  .string()
  .max(32)
  .transform((value, ctx) => {
    const e164 = toE164(value);
    if (!e164) {
      ctx.addIssue({
        code: "custom",
        message: "invalid phone number (use international format, e.g. +14155552671)",
      });
      return z.NEVER;
    }
    return e164;
  })
  .openapi({ type: "string", example: "+14155552671" });
