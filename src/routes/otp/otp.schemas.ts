import { z } from "@hono/zod-openapi";
import { MESSAGE_STATUSES } from "../../messages/types";
import { CODE_SIZE, OTP_RULES } from "../../otp/code";
import { OTP_STATUSES } from "../../otp/status";
import { ERASED_NOTE, eitherAddress, PhoneNumber, UserId } from "../openapi";

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
    to_number: z
      .string()
      .nullable()
      .openapi({
        description:
          "The recipient, E.164; null for one known by `to_user_id`. A reverse OTP: the only number whose message can verify it, or null when any number can." +
          ERASED_NOTE,
        example: "+14155552671",
      }),
    to_user_id: z.string().nullable().openapi({
      description:
        "The recipient known by the network's id instead of a number (docs/contacts.md, Contacts): a BSUID or a LID; null for a number. A reverse OTP: the only user whose message can verify it.",
      example: null,
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
      description:
        "A reverse OTP: the number (E.164) whose message verified it; null otherwise, and when the sender is known by a user id only.",
      example: null,
    }),
    verified_contact: z
      .object({
        phone_number: z.string().nullable().openapi({ description: "Their number (E.164), when known." }),
        user_id: z
          .string()
          .nullable()
          .openapi({ description: "Their user id (a BSUID or a LID), when the network gave one." }),
      })
      .nullable()
      .openapi({
        description:
          "A reverse OTP: who verified it, by number, user id or both (docs/contacts.md, Contacts); null until verified.",
        example: null,
      }),
    attempts_remaining: z
      .number()
      .int()
      .openapi({
        description: `Wrong codes still accepted, of ${OTP_RULES.maxFailedAttempts}. Always 0 for a reverse OTP (no code is typed).`,
        example: 5,
      }),
    sends_remaining: z
      .number()
      .int()
      .openapi({
        description: `Resends still allowed: ${OTP_RULES.maxSends} codes per OTP, the first included. Always 0 for a reverse OTP (nothing is sent).`,
        example: 4,
      }),
    refused_messages: z.number().int().openapi({
      description:
        "A reverse OTP: incoming messages that carried its code and verified nothing: from a number other than `to_number`, from a number that had sent the session too many wrong codes since the OTP was created, or dated before the OTP was created (a replayed message). Always 0 for a send OTP.",
      example: 0,
    }),
    message_id: z.uuid().nullable().openapi({
      description:
        "The latest chat message carrying the current code (its content is the rendered template, the code masked): the last of `attempts` for that code, a failover's once one happened. Null while a resend is being queued, and always for a reverse OTP.",
    }),
    attempts: z.array(OtpAttemptSchema).openapi({
      description:
        "The messages the codes went out in, oldest first: each send and resend on the app's first connected channel, and each failover to a later channel when no `delivered` ack came within the app's `failover_after_seconds` or the message failed. Empty for a reverse OTP.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Otp", {
    description:
      "A one-time code: sent to one number, or (`mode: reverse`) sent by the user to the app's session. The code itself is never shown, but in a reverse OTP's create response.",
  });

export const OtpEnvelopeSchema = z.object({ success: z.literal(true), data: OtpSchema });

export const ReverseOtpSchema = OtpSchema.extend({
  mode: z.literal("reverse"),
  code: z.string().openapi({
    description:
      "The code, `code_size` digits, for the user to send to the session. Shown in this response only (and its Idempotency-Key replay).",
    example: "482913",
  }),
  link: z.url().openapi({
    description:
      "`https://wa.me/<session number digits>?text=<the app's message_template with the code, URL-encoded>`: opens a chat with the session, the text written in.",
    example:
      "https://wa.me/14155552671?text=482913%20is%20your%20Acme%20verification%20code.%20Do%20not%20share%20it.",
  }),
  qr_code: z.string().openapi({
    description:
      "`link` as a QR code, a `data:image/png;base64,…` URI, for a user on another device to scan.",
    example: "data:image/png;base64,iVBORw0KGgo…",
  }),
}).openapi("ReverseOtp", {
  description:
    "A new reverse OTP: the Otp, `pending`, with the code and how the user sends it. No other response shows `code`, `link` or `qr_code`.",
});

export const CreatedOtpEnvelopeSchema = z.object({
  success: z.literal(true),
  data: z.union([OtpSchema, ReverseOtpSchema]).openapi({
    description: "`mode: send`: the Otp. `mode: reverse`: the ReverseOtp, with `code`, `link` and `qr_code`.",
  }),
});

const OTP_MODES = ["send", "reverse"] as const;

export const SendOtpBody = z
  .strictObject({
    mode: z.enum(OTP_MODES).optional().openapi({
      description:
        "`send` (default): the code is sent to `to_number` or `to_user_id`. `reverse`: nothing is sent; the response holds the code, a wa.me link and its QR code, and the user's message with the code to the app's session verifies the OTP.",
      example: "send",
    }),
    to_number: PhoneNumber.optional().openapi({
      description:
        "The recipient, international format; stored as E.164. To send, this or `to_user_id`. For `reverse`, optional: the only number whose message can verify the OTP (else any number can).",
      example: "+14155552671",
    }),
    to_user_id: UserId.optional().openapi({
      description:
        "The recipient known by the network's id instead of a number (docs/contacts.md, Contacts): a business-scoped user id (Cloud API) or a LID (WAHA, Evolution API); not with `to_number`. A kind no connected channel's gateway can send to: 422 `recipient_not_supported`. For `reverse`: the only user whose message can verify the OTP.",
      example: "US.13491208655302741918",
    }),
  })
  // One shape per mode for the handler: `to`, the recipient's address (E.164 or a user id), is
  // required only to send.
  .transform((body, ctx) => {
    const to = eitherAddress(body, ctx);
    if (body.mode === "reverse") return { mode: "reverse" as const, to: to ?? null };
    if (to === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["to_number"],
        message: "required when mode is send (or to_user_id)",
      });
      return z.NEVER;
    }
    return { mode: "send" as const, to };
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
