import { z } from "@hono/zod-openapi";
import { GATEWAY_NAMES } from "../../config";
import { publicHttpsUrlProblem } from "../../lib/media-url";
import { LINK_EXPIRES_IN } from "../../links/tokens";
import { PhoneNumber } from "../openapi";
import { CursorParam, MAX_LIMIT, PageLinksSchema, pageLimit } from "../paging";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** A gateway's name (config.ts `GATEWAY_NAMES`). */
const Gateway = z.enum(GATEWAY_NAMES).openapi({ example: "sandbox" });

/** One of Meta's numeric Graph API ids (the document's `^[0-9]+$` path parameters). */
const GraphId = z
  .string()
  .max(32)
  .regex(/^[0-9]{1,32}$/, "digits only, as Meta shows it");

/**
 * The business number a `cloud_api` session sends from, by Meta's ids (WhatsApp Manager → API
 * Setup) and an access token of a system user that may manage the WhatsApp Business Account.
 */
const CloudApiLink = z
  .object({
    phone_number_id: GraphId.openapi({
      description: "The number's Phone-Number-ID in Meta's Graph API.",
      example: "106540352242922",
    }),
    waba_id: GraphId.openapi({
      description:
        "The WhatsApp Business Account (WABA-ID) that owns the number and its templates. Checked on create: its `phone_numbers`, read with `access_token`, must list `phone_number_id`, else 422 `gateway_credentials_invalid` naming `cloud_api.waba_id`.",
      example: "102290129340398",
    }),
    access_token: z.string().min(1).max(2048).openapi({
      description:
        "A Graph API access token with `whatsapp_business_messaging` and `whatsapp_business_management`. Stored sealed (AES-256-GCM) and never shown again.",
      example: "EAAG…",
    }),
  })
  .openapi("CloudApiLink");

/**
 * Body of `POST /v1/chatapp/sessions`, optional: `gateway`, one the deployment enables
 * (`CHATAPP_GATEWAYS`); without it, `CHATAPP_GATEWAY`; `cloud_api`, required with (and only with)
 * the `cloud_api` gateway. Other fields are ignored, as they were before the route took a body.
 */
export const CreateSessionBody = z
  .object({
    gateway: Gateway.optional().openapi({
      description:
        "The gateway that reaches the chat network for this session: one of those the deployment enables (`CHATAPP_GATEWAYS`, default just `CHATAPP_GATEWAY`). Default: `CHATAPP_GATEWAY`. One not enabled → 422 `validation_failed` under `errors.gateway`.",
    }),
    cloud_api: CloudApiLink.optional().openapi({
      description:
        'With `gateway: "cloud_api"` (and only then): the business number to link. Meta reads it at once: the session is `connected` when Meta takes the ids and token and the WABA holds the number, else 422 `gateway_credentials_invalid` with Meta\'s message (naming `cloud_api.waba_id` in `errors` for the WABA) and nothing is stored; a number another session holds → 409 `phone_number_in_use`.',
    }),
  })
  .openapi("CreateSessionRequest");

/** A session's `health` (lib/session-health.ts `SessionHealth`; docs/sessions.md, Session health). */
export const SessionHealthSchema = z
  .object({
    timelock: z
      .object({
        active: z.boolean(),
        until: timestamp
          .nullable()
          .openapi({ description: "When the timelock ends; null when the gateway did not say." }),
      })
      .nullable()
      .openapi({
        description:
          "WhatsApp's reach-out timelock on new chats (send error 463): WAHA's `me.reachoutTimelock`, or set active by a send refused with 463. Null until a gateway told.",
      }),
    cap: z
      .object({
        level: z.string().openapi({
          description:
            "`NONE`, `FIRST_WARNING`, `SECOND_WARNING` or `CAPPED` (WAHA's `cappingStatus`; an open set: WhatsApp may add levels).",
          example: "FIRST_WARNING",
        }),
        used: z.int().openapi({ description: "New chats started this cycle.", example: 640 }),
        total: z
          .int()
          .openapi({ description: "New chats allowed this cycle; -1 for no cap.", example: 1000 }),
        cycle_end: timestamp.nullable().openapi({ description: "When the cycle ends and the quota resets." }),
      })
      .nullable()
      .openapi({
        description:
          "The monthly cap on new chats: WAHA's `me.messageCapping` / `GET /api/sessions/{session}/capping` (GOWS). Null until a gateway told.",
      }),
    quality: z.enum(["green", "yellow", "red"]).nullable().openapi({
      description: "The Cloud API number's `quality_rating` (`NA` and other gateways: null).",
    }),
    checked_at: timestamp.nullable().openapi({ description: "When the gateway was last read; null before." }),
  })
  .openapi("SessionHealth");

export const SessionSchema = z
  .object({
    id: z.uuid(),
    account_id: z.uuid(),
    session_id: z.string().openapi({ example: "session_0f8fad5b-d9cb-469f-a165-70867728950e" }),
    phone_number: z.string().nullable().openapi({ example: "+447700900123" }),
    display_name: z.string(),
    status: z.enum(["pending", "connected", "disconnected", "banned", "failed"]),
    reason: z.string().nullable().openapi({
      description:
        "Why the session failed or disconnected: `qr_timeout`, `disconnected_by_user`, or the gateway's reason.",
    }),
    gateway: Gateway.openapi({
      description:
        "The gateway the session was created on: the create request's `gateway`, else the deployment's `CHATAPP_GATEWAY`.",
    }),
    health: SessionHealthSchema,
    last_seen_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Session");

const QrCode = z.string().openapi({
  description: "The QR code to scan: a PNG image as a base64 data URI.",
  example: "data:image/png;base64,iVBORw0KGgo…",
});

export const CreatedSessionSchema = z.object({
  success: z.literal(true),
  session: SessionSchema.omit({ reason: true }),
  qr_code: QrCode.nullable().openapi({
    description:
      "The QR code to scan while the session is `pending`; null when it is `connected` at once (a `cloud_api` number, or a gateway already linked).",
  }),
});
export const SessionListSchema = z.object({
  success: z.literal(true),
  sessions: z.array(SessionSchema),
  ...PageLinksSchema,
});

/**
 * Page size of the session list when `limit` is absent: the largest, so that an account within
 * the default `max_sessions` (50) gets every session on its first page, as before the list was
 * paged.
 */
export const SESSIONS_DEFAULT_LIMIT = MAX_LIMIT;

/** Query of `GET /v1/chatapp/sessions`: `limit` and `cursor`, as the message list takes them. */
export const SessionListQuery = z.object({
  limit: pageLimit(SESSIONS_DEFAULT_LIMIT).openapi({
    description: `Page size, 1–${MAX_LIMIT} (default ${SESSIONS_DEFAULT_LIMIT}).`,
  }),
  cursor: CursorParam.optional(),
});
export const SessionEnvelopeSchema = z.object({ success: z.literal(true), session: SessionSchema });
export const ReconnectedSessionSchema = SessionEnvelopeSchema.extend({
  qr_code: QrCode.optional().openapi({ description: "Present when the session went back to `pending`." }),
});
export const QrCodeSchema = z.object({ success: z.literal(true), qr_code: QrCode });
export const DeletedSchema = z.object({
  success: z.literal(true),
  message: z.string().openapi({ example: "Session deleted." }),
});

export const PairingCodeBody = z.strictObject({
  phone_number: PhoneNumber.openapi({
    description: "The number of the phone to link, international format.",
    example: "+14155552671",
  }),
});
export const PairingCodeSchema = z.object({
  success: z.literal(true),
  pairing_code: z.string().openapi({
    description:
      "Enter it on the phone under Linked devices → Link with phone number. Valid while the session is pending; a new request replaces it.",
    example: "K7QW-3MZP",
  }),
});
export const GatewayHealthSchema = z
  .object({
    success: z.literal(true),
    health: z.object({
      gateway: Gateway,
      gateway_state: z.string().nullable().openapi({
        description:
          "The gateway's own view of the session at the last check: `linked`, `qr`, `dropped`, `failed`, or `starting`; null before the first check that reached it.",
      }),
      checked_at: timestamp.nullable(),
      last_event_at: timestamp.nullable().openapi({
        description:
          "When the newest status event the gateway posted happened (by the gateway's clock); null for the sandbox.",
      }),
      consecutive_failures: z.int().openapi({
        description:
          "Checks in a row that could not reach the gateway; at 3 a connected session becomes `disconnected` with reason `gateway_unreachable`.",
      }),
      last_error: z.string().nullable(),
    }),
  })
  .openapi("GatewayHealth");

export const LiveQuery = z.object({
  token: z
    .string()
    .max(200)
    .optional()
    .openapi({
      param: { name: "token", in: "query" },
      description:
        "A link token (the last segment of a `POST …/link-url` URL), for browsers, which cannot send `Authorization` on a WebSocket. Used only when the request has no `Authorization` header.",
    }),
});

export const LinkUrlBody = z.strictObject({
  expires_in: z
    .int()
    .min(LINK_EXPIRES_IN.min)
    .max(LINK_EXPIRES_IN.max)
    .optional()
    .openapi({
      format: "int32",
      description: `Seconds the link stays valid: ${LINK_EXPIRES_IN.min}–${LINK_EXPIRES_IN.max.toLocaleString("en")}, default ${LINK_EXPIRES_IN.default}.`,
      example: 900,
    }),
  return_url: z
    .string()
    .superRefine((value, ctx) => {
      const problem = publicHttpsUrlProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional()
    .openapi({
      maxLength: 2_048,
      description:
        "Where the link page sends the user once the phone is linked: an absolute `https` URL on a public host, without credentials, at most 2,048 characters (the `media_url` rule).",
      example: "https://app.example.com/settings/chat",
    }),
});

export const LinkUrlSchema = z
  .object({
    success: z.literal(true),
    url: z.string().openapi({
      description:
        "The hosted link page: `<PUBLIC_URL or the request's origin>/link/<token>`. Whoever holds it can see the session's status and QR code and link a phone, until it expires or is revoked: hand it only to the phone's owner.",
      example: "https://api.example.com/link/3q2-7wJfP0T1lqkT6Yq0kQm3E1JX3W5aC3f7h0qWm6Q",
    }),
    expires_at: timestamp,
    return_url: z.string().nullable(),
    created_at: timestamp,
  })
  .openapi("LinkUrl");
