import { z } from "@hono/zod-openapi";
import { isPhoneCountry } from "../../lib/phone";
import { MAX_TEMPLATE_LENGTH, templateProblems } from "../../lib/template";
import { CODE_SIZE } from "../../otp/code";
import { moneyAmount } from "../openapi";

// Field bounds are this API's own; the `App` schema and `POST /v1/apps` in openapi.json state them.

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** Default and bounds of `expiry_seconds` in seconds, chosen here: default 10 minutes, 60–3,600. */
export const EXPIRY_SECONDS = { min: 60, max: 3_600, default: 600 } as const;
/** Default and maximum of the listing's `per_page`, this API's (`GET /v1/apps` in openapi.json). */
export const PER_PAGE = { max: 100, default: 10 } as const;
/**
 * Bounds of `allowed_countries`, chosen here: at least one code (null, not `[]`, means every
 * country), at most 250 (ISO 3166-1 assigns 249 alpha-2 codes).
 */
export const ALLOWED_COUNTRIES = { min: 1, max: 250 } as const;

const name = z.string().trim().min(1).max(100).openapi({ example: "Acme" });

const senderId = z.guid().max(36).openapi({
  description: "Sender identifier: one uuid string.",
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
    format: "int32",
    description: `Number of digits of each code, ${CODE_SIZE.min}–${CODE_SIZE.max}. Default ${CODE_SIZE.default}.`,
    example: 6,
  });

const expirySeconds = z.number().int().min(EXPIRY_SECONDS.min).max(EXPIRY_SECONDS.max).openapi({
  format: "int32",
  description: "Seconds a code stays valid after it is sent, 60–3,600. Default 600.",
  example: 600,
});

/** Bounds of `channels`, chosen here: 1–5 sessions (docs/otp.md, Channels and failover). */
export const CHANNELS = { min: 1, max: 5 } as const;
/** Default and bounds of `failover_after_seconds`, chosen here: 15 s, 5–300. */
export const FAILOVER_AFTER_SECONDS = { min: 5, max: 300, default: 15 } as const;

const channelsDescription =
  `The sessions codes go out through, in order: ${CHANNELS.min}–${CHANNELS.max} session ids of the account, each once, ` +
  "on any gateway. A code goes out on the first `connected` one; when the send fails, or no `delivered` ack " +
  "comes within `failover_after_seconds`, the same code goes out on the next connected one. " +
  "`chatapp_session_id` is the first of them: setting it alone sets a one-channel list.";

const channels = z
  .array(z.uuid().max(36))
  .min(CHANNELS.min, "must name at least one session (null removes them)")
  .max(CHANNELS.max, { message: `must name at most ${CHANNELS.max} sessions`, abort: true })
  .superRefine((ids, ctx) => {
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: "custom", message: "lists a session more than once" });
  });

const failoverAfterSeconds = z
  .number()
  .int()
  .min(FAILOVER_AFTER_SECONDS.min)
  .max(FAILOVER_AFTER_SECONDS.max)
  .openapi({
    format: "int32",
    description: `Seconds a code waits for a \`delivered\` ack on one channel before it goes out on the next, ${FAILOVER_AFTER_SECONDS.min}–${FAILOVER_AFTER_SECONDS.max}. Default ${FAILOVER_AFTER_SECONDS.default}.`,
    example: 15,
  });

const reversePriceDescription =
  "What one reverse OTP (`mode: reverse`) costs, in the account's currency, at most 2 decimals; charged only when " +
  "the user's message verifies it. Default 0.";

const COUNTRY_FORMAT = "must be an ISO 3166-1 alpha-2 code: two upper-case letters, e.g. GB";

/**
 * Why a two-character `code` is not a country `allowed_countries` takes, or null when it is one.
 * Upper case only, as Stripe's `allowed_countries` (an enum of upper-case codes) takes them: `gb`
 * is refused with a hint rather than changed, so what is stored is what the client sent.
 */
function countryCodeProblem(code: string): string | null {
  if (isPhoneCountry(code)) return null;
  const upper = code.toUpperCase();
  if (code !== upper && isPhoneCountry(upper)) return `must be upper case: ${upper}`;
  if (!/^[A-Z]{2}$/.test(code)) return COUNTRY_FORMAT;
  return `${code} is not an ISO 3166-1 alpha-2 code of a country with phone numbers`;
}

const countryCode = z
  .string()
  .length(2, COUNTRY_FORMAT)
  .superRefine((code, ctx) => {
    const problem = code.length === 2 ? countryCodeProblem(code) : null;
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({ pattern: "^[A-Z]{2}$", example: "GB" });

const allowedCountriesDescription =
  "The countries whose numbers may be sent codes: upper-case ISO 3166-1 alpha-2 codes (`US`, `GB`), " +
  `${ALLOWED_COUNTRIES.min}–${ALLOWED_COUNTRIES.max} of them, each once; lower-case codes are refused. A code must ` +
  "belong to a country with phone numbers in libphonenumber's metadata (`XK`, Kosovo, included). A send or " +
  "resend to a number of another country, or to a number of no country (`+800…`), answers 422 " +
  "`otp_country_not_allowed` before anything is charged or sent: like Twilio Verify's geo permissions, it stops " +
  "SMS pumping to premium ranges. Null or absent: every country.";

const allowedCountries = z
  .array(countryCode)
  .min(ALLOWED_COUNTRIES.min, "must name at least one country (null allows every country)")
  // `abort`: an over-long list gets this one message, not also one about its repeats.
  .max(ALLOWED_COUNTRIES.max, {
    message: `must name at most ${ALLOWED_COUNTRIES.max} countries`,
    abort: true,
  })
  .superRefine((codes, ctx) => {
    const seen = new Set<string>();
    const repeated = new Set<string>();
    for (const code of codes) (seen.has(code) ? repeated : seen).add(code);
    if (repeated.size > 0) {
      ctx.addIssue({ code: "custom", message: `lists ${[...repeated].join(", ")} more than once` });
    }
  })
  .nullable()
  .optional();

const otpTemplateDescription =
  'The approved authentication message template a Cloud API session (`gateway: "cloud_api"`) sends codes ' +
  "with: its `name` and `language`, as `GET /v1/chatapp/sessions/{id}/templates` lists them. The code fills " +
  "the body's `{{1}}` and the copy-code button; `message_template` is not used there. Required to send codes " +
  "through a Cloud API session (422 `app_has_no_otp_template` at `POST /v1/apps/{id}/otp` without it); other " +
  "gateways ignore it.";

/** An app's `otp_template`: bounds as a template send's `template.name` and `template.language`. */
const OtpTemplateSchema = z
  .strictObject({
    name: z.string().min(1).max(512).openapi({ example: "otp_code" }),
    language: z.string().min(2).max(16).openapi({ example: "en_US" }),
  })
  .openapi("OtpTemplate");

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
    channels: z
      .array(z.uuid())
      .openapi({ description: `${channelsDescription} Empty when the app has none.`, example: [] }),
    failover_after_seconds: z.number().int().openapi({ example: 15 }),
    reverse_price: z.number().openapi({ description: reversePriceDescription, example: 0 }),
    expiry_seconds: z.number().int().openapi({ example: 600 }),
    allowed_countries: z
      .array(z.string())
      .nullable()
      .openapi({
        description:
          "The countries (ISO 3166-1 alpha-2) whose numbers may be sent codes, in the order given; null: every country.",
        example: ["US", "CA"],
      }),
    otp_template: OtpTemplateSchema.nullable().openapi({
      description: `${otpTemplateDescription} Null when the app has none.`,
    }),
    deleted_at: timestamp.nullable().openapi({ description: "Always null: deleted apps are not shown." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("App");

/**
 * The create response's record: as {@link AppSchema} without `deleted_at` (`POST /v1/apps` in
 * openapi.json).
 */
export const CreatedAppSchema = AppSchema.omit({ deleted_at: true }).openapi("CreatedApp");

export const CreateAppBody = z.strictObject({
  name,
  sender_id: senderId,
  message_template: messageTemplate.optional(),
  code_size: codeSize.optional(),
  expiry_seconds: expirySeconds.optional(),
  chatapp_session_id: z.uuid().max(36).optional().openapi({ description: sessionDescription }),
  channels: channels.optional().openapi({ description: channelsDescription }),
  failover_after_seconds: failoverAfterSeconds.optional(),
  reverse_price: moneyAmount(0).optional().openapi({ description: reversePriceDescription, example: 0 }),
  allowed_countries: allowedCountries.openapi({
    description: allowedCountriesDescription,
    uniqueItems: true,
    example: ["US", "CA"],
  }),
  otp_template: OtpTemplateSchema.optional().openapi({ description: otpTemplateDescription }),
});

export const UpdateAppBody = z.strictObject({
  name: name.optional(),
  sender_id: senderId.optional(),
  message_template: messageTemplate.optional(),
  code_size: codeSize.optional(),
  expiry_seconds: expirySeconds.optional(),
  chatapp_session_id: z
    .uuid()
    .max(36)
    .nullable()
    .optional()
    .openapi({ description: `${sessionDescription} \`null\` removes the session.` }),
  channels: channels
    .nullable()
    .optional()
    .openapi({ description: `${channelsDescription} \`null\` removes them.` }),
  failover_after_seconds: failoverAfterSeconds.optional(),
  reverse_price: moneyAmount(0).optional().openapi({ description: reversePriceDescription, example: 0 }),
  allowed_countries: allowedCountries.openapi({
    description: `${allowedCountriesDescription} \`null\` removes the rule.`,
    uniqueItems: true,
    example: ["US", "CA"],
  }),
  otp_template: OtpTemplateSchema.nullable()
    .optional()
    .openapi({ description: `${otpTemplateDescription} \`null\` removes it.` }),
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
      format: "int32",
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
