import { z } from "@hono/zod-openapi";
import { MESSAGE_STATUSES } from "../../messages/types";
import { OTP_RULES } from "../../otp/code";
import { OTP_STATUSES } from "../../otp/status";
import { CODE_SIZE } from "../apps/apps.schemas";
import { PhoneNumber } from "../openapi";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

export const OtpAttemptSchema = z
  .object({
    session_id: z.uuid().openapi({ description: "The channel: the app's session the code went out on." }),
    message_id: z.uuid().nullable().openapi({
      description: "The chat message that carried the code. Null only while it is being made.",
    }),
    send: z.number().int().openapi({
      description: "Which code it carried: 1 for the first, 2 for the first resend, and so on.",
      example: 1,
    }),
    status: z
      .enum(MESSAGE_STATUSES)
      .nullable()
      .openapi({ description: "The message's status now (null without a message).", example: "delivered" }),
    reason: z
      .string()
      .nullable()
      .openapi({ description: "Why the message failed, as the message shows it." }),
    created_at: timestamp.openapi({ description: "When the code was sent on this channel." }),
    sent_at: timestamp.nullable(),
    delivered_at: timestamp.nullable(),
    read_at: timestamp.nullable(),
    failed_at: timestamp.nullable(),
  })
  .openapi("OtpAttempt", {
    description:
      "One message an OTP's codes went out in: on the first connected channel, then on each channel a code failed over to.",
  });

export const OtpSchema = z
  .object({
    id: z.uuid(),
    app_id: z.uuid(),
    mode: z.enum(["send", "reverse"]).openapi({
      description:
        "`send`: the service sends the code to `to_number`. `reverse`: nothing is sent; the user sends the code to the app's session, and that message verifies the OTP.",
    }),
    to_number: z.string().nullable().openapi({
      description:
        "The recipient, E.164. A reverse OTP: the only number whose message can verify it, or null when any number can.",
      example: "+14155552671",
    }),
    channel: z
      .literal("chatapp")
      .openapi({ description: "How the code is sent: through the app's chat session." }),
    status: z.enum(OTP_STATUSES).openapi({
      description:
        "`pending` until a right code (`verified`), the last allowed wrong code (`failed`) or `expires_at` (`expired`).",
    }),
    expires_at: timestamp.openapi({
      description: "End of the current code's validity; a resend restarts it.",
    }),
    verified_number: z.string().nullable().openapi({
      description: "A reverse OTP: the number (E.164) whose message verified it; null otherwise.",
      example: null,
    }),
    attempts_remaining: z
      .number()
      .int()
      .openapi({ description: `Wrong codes still accepted, of ${OTP_RULES.maxFailedAttempts}.`, example: 5 }),
    sends_remaining: z
      .number()
      .int()
      .openapi({
        description: `Resends still allowed: ${OTP_RULES.maxSends} codes per OTP, the first included.`,
        example: 4,
      }),
    message_id: z.uuid().nullable().openapi({
      description:
        "The latest chat message carrying the current code (its content is the rendered template, the code masked): the last of `attempts` for that code, a failover's once one happened. Null only while a resend is being queued.",
    }),
    attempts: z.array(OtpAttemptSchema).openapi({
      description:
        "The messages the codes went out in, oldest first: each send and resend on the app's first connected channel, and each failover to a later channel when no `delivered` ack came within the app's `failover_after_seconds` or the message failed. Empty for a reverse OTP.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Otp", { description: "A one-time code sent to one number. The code itself is never shown." });

export const OtpEnvelopeSchema = z.object({ success: z.literal(true), data: OtpSchema });

export const SendOtpBody = z.strictObject({
  to_number: PhoneNumber.openapi({
    description: "The recipient, international format; stored as E.164.",
    example: "+14155552671",
  }),
});

export const VerifyOtpBody = z.strictObject({
  code: z
    .string()
    .max(64)
    .trim()
    .regex(
      new RegExp(`^[0-9]{${CODE_SIZE.min},${CODE_SIZE.max}}$`),
      `must be ${CODE_SIZE.min}–${CODE_SIZE.max} digits`,
    )
    .openapi({ description: "The code the user received.", example: "482913" }),
});
