import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../events/catalogue";
import { MAX_PUBLIC_URL_LENGTH, publicHttpsUrlProblem } from "../../lib/media-url";
import { EVENT_SCOPES_NOTE } from "../events/events.schemas";

/** Endpoints one account may have. A create beyond it is 409 `webhook_endpoint_limit`. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** Longest `description`, in characters. */
export const MAX_DESCRIPTION_LENGTH = 500;
/**
 * Seconds the previous signing secret keeps signing after a rotation: the default, and the most
 * a caller may ask for (the Standard Webhooks practice of a 24-hour overlap).
 */
export const PREVIOUS_SECRET_SECONDS = { max: 86_400, default: 86_400 } as const;

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

const urlRule =
  `An absolute \`https\` URL of at most ${MAX_PUBLIC_URL_LENGTH.toLocaleString("en")} characters, without credentials, ` +
  "whose host is a public name or a public IP address: loopback, private, link-local, carrier-grade NAT, " +
  "unique-local, cloud metadata and other reserved addresses are refused, in any spelling (decimal or octal " +
  "IPv4 included), as are `localhost`, `*.local` and `*.internal` names (OWASP SSRF Prevention Cheat Sheet). " +
  "When the deployment sets `WEBHOOK_ALLOW_HTTP_LOCALHOST=true` (local development), " +
  "`http://localhost[:port]` and `http://127.0.0.1[:port]` are accepted too. " +
  "A refused URL is 422 `validation_failed` with an error on `url`.";

// The request schema applies the rule with its development exception; the handlers then refuse
// that exception unless the deployment allows it (the configuration is not known here).
const url = z
  .string()
  .superRefine((value, ctx) => {
    const problem = publicHttpsUrlProblem(value, { allowHttpLocalhost: true });
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({
    maxLength: MAX_PUBLIC_URL_LENGTH,
    description: `Where events are posted. ${urlRule}`,
    example: "https://example.com/webhooks",
  });

const eventType = z
  .enum(EVENT_TYPES)
  .openapi({ description: "An event type.", example: "message.delivered" });

const events = z
  .array(eventType)
  .min(1)
  .max(EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, "must not repeat an event type")
  .openapi({
    description: `The event types posted to this endpoint, each at most once (1–${EVENT_TYPES.length} of: ${EVENT_TYPES.map((t) => `\`${t}\``).join(", ")}). Each type needs the scope that reads it (${EVENT_SCOPES_NOTE}): naming a type the key may not read is 403 \`insufficient_scope\`. Left out or null: every type, including types added later, for a \`*\` key; any other key gets the list of the types it may read.`,
    example: ["message.delivered", "message.read"],
  });

const description = z
  .string()
  .max(MAX_DESCRIPTION_LENGTH)
  .openapi({
    description: `A note for the account's own use, at most ${MAX_DESCRIPTION_LENGTH} characters.`,
    example: "Order service, production",
  });

const enabled = z.boolean().openapi({
  description: "Whether events are posted to the endpoint. Default true.",
  example: true,
});

export const WebhookEndpointSchema = z
  .object({
    id: z.uuid().openapi({ description: "The endpoint's identifier, used in paths." }),
    account_id: z.uuid().openapi({ description: "The owning account." }),
    url: z
      .string()
      .openapi({ description: "Where events are posted.", example: "https://example.com/webhooks" }),
    description: z.string().nullable().openapi({ description: "The account's note, or null." }),
    events: z
      .array(eventType)
      .nullable()
      .openapi({
        description:
          "The event types posted to this endpoint; null for every type, including types added later (only a `*` key subscribes one so). Delivery posts nothing else.",
        example: ["message.delivered", "message.read"],
      }),
    enabled: z.boolean().openapi({ description: "Whether events are posted to the endpoint." }),
    disabled_reason: z.string().nullable().openapi({
      description:
        'Why the service turned the endpoint off: `gone` (it answered 410 Gone), `failing` (its deliveries failed for days), `key_revoked` (the API key in `created_by` or `url_set_by` was revoked; docs/security.md, Keys and scopes). Null while enabled or when turned off through the API. `PATCH {"enabled": true}` clears it.',
      example: "key_revoked",
    }),
    secret_prefix: z.string().openapi({
      description:
        "The first characters of the signing secret, to tell secrets apart; the secret itself is shown only when it is made (create and rotate-secret).",
      example: "whsec_MfKQ9r8G",
    }),
    previous_secret_expires_at: timestamp.nullable().openapi({
      description:
        "After a rotation: until when the previous secret signs too (each delivery then carries both signatures). Null when there is none.",
    }),
    created_at: timestamp.openapi({ description: "Creation time." }),
    updated_at: timestamp.openapi({
      description:
        "Last change through the API (update, rotate-secret), by delivery or by a key's revocation (turned off).",
    }),
    created_by: z.uuid().nullable().openapi({
      description:
        "The id of the API key that created the endpoint; null for an endpoint made before endpoints recorded it. Revoking that key turns the endpoint off (`disabled_reason` `key_revoked`).",
      example: "0f8fad5b-d9cb-469f-a165-70867728950e",
    }),
    url_set_by: z.uuid().nullable().openapi({
      description:
        "The id of the API key that set the current `url`: the creating key, or the last key whose `PATCH` pointed the endpoint elsewhere; null for an endpoint made before endpoints recorded it. Revoking that key turns the endpoint off (`disabled_reason` `key_revoked`).",
      example: "0f8fad5b-d9cb-469f-a165-70867728950e",
    }),
  })
  .openapi("WebhookEndpoint");

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description:
      "The signing secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. Shown only in this response: store it now. Verify deliveries with it (e.g. the `standardwebhooks` package's `verify`).",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwTvfp9FjjVPg=",
  }),
}).openapi("WebhookEndpointWithSecret");

export const CreateWebhookEndpointBody = z.strictObject({
  url,
  events: events.nullable().optional(),
  description: description.nullable().optional(),
  enabled: enabled.optional(),
});

export const UpdateWebhookEndpointBody = z.strictObject({
  url: url.optional(),
  events: events.nullable().optional(),
  description: description
    .nullable()
    .optional()
    .openapi({
      description: `A note for the account's own use, at most ${MAX_DESCRIPTION_LENGTH} characters; null removes it.`,
    }),
  enabled: z.boolean().optional().openapi({
    description: "`false` stops posting events to the endpoint; `true` resumes and clears `disabled_reason`.",
  }),
});

export const RotateSecretBody = z.strictObject({
  expires_in_seconds: z
    .int()
    .min(0)
    .max(PREVIOUS_SECRET_SECONDS.max)
    .optional()
    .openapi({
      format: "int32",
      description: `Seconds the previous secret keeps signing alongside the new one, 0–${PREVIOUS_SECRET_SECONDS.max}. Default ${PREVIOUS_SECRET_SECONDS.default} (24 hours); 0 revokes it at once.`,
      example: 3_600,
    }),
});

export const WebhookEndpointEnvelopeSchema = z.object({
  success: z.literal(true),
  data: WebhookEndpointSchema,
});
export const WebhookEndpointWithSecretEnvelopeSchema = z.object({
  success: z.literal(true),
  data: WebhookEndpointWithSecretSchema,
});
export const WebhookEndpointListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(WebhookEndpointSchema).openapi({
      description: `Every endpoint of the account (at most ${MAX_WEBHOOK_ENDPOINTS}), newest first.`,
    }),
  })
  .openapi("WebhookEndpointList");
