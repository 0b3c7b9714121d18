import type { AttemptView } from "../db/queries/otp-attempts";
import type { OtpRow } from "../db/queries/otps";
import { shownAsNumber } from "../lib/contact-identity";
import { formatNullableTimestamp, formatTimestamp } from "../lib/time";
import { OTP_RULES } from "../otp/code";
import type { CreatedReverseOtp } from "../otp/reverse";
import { otpStatusAt } from "../otp/status";

/**
 * One message an OTP's codes went out in (docs/otp.md, Channels and failover): the
 * channel's session, the message, the code's number (`send`: 1 for the first code, 2 for the
 * first resend, …), and the message's status and times as the message shows them (null while the
 * attempt's message is being made).
 */
function toAttemptRecord(attempt: AttemptView) {
  return {
    session_id: attempt.sessionId,
    message_id: attempt.messageId,
    send: attempt.sendSeq,
    status: attempt.status,
    reason: attempt.reason,
    created_at: formatTimestamp(attempt.createdAt),
    sent_at: formatNullableTimestamp(attempt.sentAt),
    delivered_at: formatNullableTimestamp(attempt.deliveredAt),
    read_at: formatNullableTimestamp(attempt.readAt),
    failed_at: attempt.failedAt,
  };
}

/**
 * An OTP as the API shows it (docs/otp.md, Sending and verifying): `{id, app_id, mode, to_number, to_user_id,
 * channel, status, expires_at, verified_number, attempts_remaining, sends_remaining, refused_messages,
 * message_id, attempts, created_at, updated_at}`. A reverse OTP's `failed_attempts` counts the
 * messages with its code that it refused (src/otp/reverse.ts `verifyByIncoming`): its
 * `refused_messages`. Never the code, nor its HMAC (a reverse OTP's create response adds the
 * code itself: src/routes/otp). `attempts` are the messages its codes went out in, oldest first
 * (db/queries/otp-attempts.ts `listAttempts`, or the `attempts` an event's snapshot holds); none
 * when the row comes without them.
 */
export function toOtpRecord(row: OtpRow & { attempts?: AttemptView[] }, now: number = Date.now()) {
  return {
    id: row.id,
    app_id: row.appId,
    mode: row.mode,
    // An erased contact's address (docs/contacts.md, Erasure) shows as `to_number`, as on messages.
    to_number: row.toNumber !== null && shownAsNumber(row.toNumber) ? row.toNumber : null,
    to_user_id: row.toNumber !== null && !shownAsNumber(row.toNumber) ? row.toNumber : null,
    channel: "chatapp" as const,
    status: otpStatusAt(row, now),
    expires_at: formatTimestamp(row.expiresAt),
    verified_number: row.verifiedNumber,
    verified_contact:
      row.verifiedNumber === null && row.verifiedUserId === null
        ? null
        : { phone_number: row.verifiedNumber, user_id: row.verifiedUserId },
    // A reverse OTP takes no typed code and sends none.
    attempts_remaining:
      row.mode === "reverse" ? 0 : Math.max(OTP_RULES.maxFailedAttempts - row.failedAttempts, 0),
    sends_remaining: row.mode === "reverse" ? 0 : Math.max(OTP_RULES.maxSends - row.sends, 0),
    refused_messages: row.mode === "reverse" ? row.failedAttempts : 0,
    message_id: row.messageId,
    attempts: (row.attempts ?? []).map(toAttemptRecord),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

/**
 * A new reverse OTP as its create response alone shows it (docs/otp.md, Reverse OTP):
 * {@link toOtpRecord} with `code`, `link` (the wa.me link with the text written in) and `qr_code`
 * (the link as a PNG data URI). No other response shows these three.
 */
export function toReverseOtpRecord(created: CreatedReverseOtp, now: number = Date.now()) {
  return {
    ...toOtpRecord(created.otp, now),
    code: created.code,
    link: created.link,
    qr_code: created.qrCode,
  };
}
