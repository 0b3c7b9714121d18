import { z } from "@hono/zod-openapi";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

export const LinkTokenParam = z.object({
  token: z
    .string()
    .max(200)
    .openapi({
      param: { name: "token", in: "path" },
      description: "The last segment of a link URL (`POST /v1/chatapp/sessions/{id}/link-url`).",
    }),
});

export const PublicSessionSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(["pending", "connected", "disconnected", "banned", "failed"]),
    reason: z.string().nullable().openapi({
      description: "Why the session failed or disconnected (`qr_timeout`: reconnect for a new QR code).",
    }),
    phone_number: z.string().nullable().openapi({
      description: "The linked phone's number while `connected`, else null.",
      example: "+447700900123",
    }),
    updated_at: timestamp,
  })
  .openapi("PublicSession", {
    description: "A session as a link token's holder sees it: nothing of the account it belongs to.",
  });

const QrCode = z.string().openapi({
  description: "The QR code to scan: a PNG image as a base64 data URI.",
  example: "data:image/png;base64,iVBORw0KGgo…",
});

export const LinkViewSchema = z
  .object({
    success: z.literal(true),
    session: PublicSessionSchema,
    qr_code: QrCode.nullable().openapi({ description: "While `pending`: the QR code to scan; else null." }),
    qr_expires_at: timestamp.nullable().openapi({
      description:
        "While `pending`: when the next QR code replaces this one (fetch again then, or watch the live route).",
    }),
    return_url: z.string().nullable().openapi({ description: "Where to send the user once linked, if set." }),
    link_expires_at: timestamp.openapi({ description: "When this link stops working." }),
  })
  .openapi("LinkView");

export const LinkReconnectedSchema = z.object({
  success: z.literal(true),
  session: PublicSessionSchema,
  qr_code: QrCode.optional().openapi({ description: "Present when the session went back to `pending`." }),
});
