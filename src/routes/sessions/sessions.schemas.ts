import { z } from "@hono/zod-openapi";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

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
  qr_code: QrCode,
});
export const SessionListSchema = z.object({ success: z.literal(true), sessions: z.array(SessionSchema) });
export const SessionEnvelopeSchema = z.object({ success: z.literal(true), session: SessionSchema });
export const ReconnectedSessionSchema = SessionEnvelopeSchema.extend({
  qr_code: QrCode.optional().openapi({ description: "Present when the session went back to `pending`." }),
});
export const QrCodeSchema = z.object({ success: z.literal(true), qr_code: QrCode });
export const DeletedSchema = z.object({
  success: z.literal(true),
  message: z.string().openapi({ example: "Session deleted." }),
});
