import { z } from "@hono/zod-openapi";
import { PhoneNumber } from "../openapi";

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
      gateway: z.enum(["sandbox", "waha", "evolution"]),
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
