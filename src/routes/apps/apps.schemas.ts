import { z } from "@hono/zod-openapi";
import { MAX_TEMPLATE_LENGTH, templateProblems } from "../../lib/template";

// Field bounds are this API's own: the interface document (§2.3) leaves them open.

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** Default and bounds of `code_size` (interface document §8: default 6; bounds 4–10 chosen here). */
export const CODE_SIZE = { min: 4, max: 10, default: 6 } as const;
/** Default and bounds of `expiry_seconds` in seconds, chosen here: default 10 minutes, 60–3,600. */
export const EXPIRY_SECONDS = { min: 60, max: 3_600, default: 600 } as const;
/** Default and maximum of the listing's `per_page` (default: interface document §8; maximum: ours). */
export const PER_PAGE = { max: 100, default: 10 } as const;

const name = z.string().trim().min(1).max(100).openapi({ example: "Acme" });

const senderId = z.guid().openapi({
  description:
    "Sender identifier: one uuid string (the interface document's field list types it as an array).",
  example: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
});

const messageTemplate = z
  .string()
  .min(1)
  .max(MAX_TEMPLATE_LENGTH)
  .superRefine((template, ctx) => {
    for (const message of templateProblems(template)) ctx.addIssue({ code: "custom", message });
  })
  .openapi({
    description:
      "The text sent with the code, 1–1,000 characters. Placeholders: `{{code}}` (required) and " +
      "`{{app_name}}`; the single-brace forms `{code}`/`{app_name}` and spaces inside the braces " +
      "(`{{ code }}`) are accepted too. Braces are reserved for placeholders: an unknown placeholder " +
      "or a stray brace is refused (422). Default: a text with the app's name, e.g. " +
      "`{{code}} is your Acme verification code. Do not share it.`",
    example: "Your {{app_name}} code is {{code}}",
  });

const codeSize = z
  .number()
  .int()
  .min(CODE_SIZE.min)
  .max(CODE_SIZE.max)
  .openapi({
    description: `Number of digits of each code, ${CODE_SIZE.min}–${CODE_SIZE.max}. Default ${CODE_SIZE.default}.`,
    example: 6,
  });

const expirySeconds = z
  .number()
  .int()
  .min(EXPIRY_SECONDS.min)
  .max(EXPIRY_SECONDS.max)
  .openapi({
    description:
      "Seconds a code stays valid after it is sent, 60–3,600. Default 600. " +
      "An addition to the interface document's fields.",
    example: 600,
  });

const sessionDescription =
  "A session of the same account, used to send the codes through the chat application (required for chat-application OTP).";

export const AppSchema = z
  .object({
    id: z.uuid(),
    account_id: z.uuid(),
    name: z.string(),
    message_template: z.string(),
    sender_id: z.guid().openapi({ example: "6ba7b810-9dad-11d1-80b4-00c04fd430c8" }),
    code_size: z.number().int().openapi({ example: 6 }),
    chatapp_session_id: z
      .uuid()
      .optional()
      .openapi({ description: `${sessionDescription} Absent when the app has none.` }),
    expiry_seconds: z.number().int().openapi({ example: 600 }),
    deleted_at: timestamp.nullable().openapi({ description: "Always null: deleted apps are not shown." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("App");

/** The create response's record: as {@link AppSchema} without `deleted_at` (interface document §2.3). */
export const CreatedAppSchema = AppSchema.omit({ deleted_at: true }).openapi("CreatedApp");

export const CreateAppBody = z.strictObject({
  name,
  sender_id: senderId,
  message_template: messageTemplate.optional(),
  code_size: codeSize.optional(),
  expiry_seconds: expirySeconds.optional(),
  chatapp_session_id: z.uuid().optional().openapi({ description: sessionDescription }),
});

export const UpdateAppBody = z.strictObject({
  name: name.optional(),
  sender_id: senderId.optional(),
  message_template: messageTemplate.optional(),
  code_size: codeSize.optional(),
  expiry_seconds: expirySeconds.optional(),
  chatapp_session_id: z
    .uuid()
    .nullable()
    .optional()
    .openapi({ description: `${sessionDescription} \`null\` removes the session.` }),
});

/** A whole-number query parameter written in decimal digits, within bounds, with a default. */
const queryInteger = (bounds: { max: number; default: number }, description: string, paramName: string) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(1).max(bounds.max))
    .default(bounds.default)
    .openapi({
      param: { name: paramName, in: "query" },
      type: "integer",
      minimum: 1,
      maximum: bounds.max,
      default: bounds.default,
      description,
      example: bounds.default,
    });

export const ListQuery = z.object({
  page: queryInteger(
    { max: 1_000_000_000, default: 1 },
    "Page number, from 1. A page beyond the last one is empty.",
    "page",
  ),
  per_page: queryInteger(
    PER_PAGE,
    `Apps per page, 1–${PER_PAGE.max}. Default ${PER_PAGE.default}. When given, it is kept in the paging links.`,
    "per_page",
  ),
});

const pageUrl = z.string().openapi({ example: "https://api.example.com/v1/apps?page=2" });

export const AppListSchema = z
  .object({
    data: z.array(AppSchema),
    links: z.object({
      first: pageUrl,
      last: pageUrl,
      prev: pageUrl.nullable(),
      next: pageUrl.nullable(),
    }),
    meta: z.object({
      current_page: z.number().int(),
      from: z
        .number()
        .int()
        .nullable()
        .openapi({ description: "Position of the page's first app; null on an empty page." }),
      last_page: z.number().int().openapi({ description: "At least 1." }),
      links: z.array(z.object({ url: pageUrl.nullable(), label: z.string(), active: z.boolean() })).openapi({
        description:
          "`&laquo; Previous`, one entry per page number (every page, 1 to `last_page`), `Next &raquo;`.",
      }),
      path: z.string().openapi({ example: "https://api.example.com/v1/apps" }),
      per_page: z.number().int(),
      to: z
        .number()
        .int()
        .nullable()
        .openapi({ description: "Position of the page's last app; null on an empty page." }),
      total: z.number().int(),
    }),
  })
  .openapi("AppList", { description: "Laravel's length-aware paginator shape." });

export const AppEnvelopeSchema = z.object({ data: AppSchema });
export const CreatedAppEnvelopeSchema = z.object({ data: CreatedAppSchema });
