import { readConfig } from "../config";
import type { Db } from "../db/client";
import { type AppRow, findApp } from "../db/queries/apps";
import { missingRecord } from "../db/queries/archives";
import { recordSentAttempt } from "../db/queries/otp-attempts";
import {
  claimResend,
  deleteOtp,
  findOtp,
  insertOtp,
  type OtpRow,
  type PerNumberLimit,
  perNumberFreeAt,
  undoResend,
} from "../db/queries/otps";
import { ApiError } from "../errors";
import { log } from "../lib/log";
import { gatewayRefusals, recipientNotSupported } from "../messages/recipient-kinds";
import { sendMessages } from "../messages/send";
import { canAddress, canCarryCode, channelsOf, codeChannelOf, reachesNumber } from "./channels";
import { codeHmac, generateCode, OTP_RULES, otpSecret } from "./code";
import { type CodeChannel, codeSendRequest } from "./code-message";
import { assertCountryAllowed } from "./countries";
import { firstWatch, queueFailoverJob } from "./failover";
import { otpStatusAt } from "./status";

// Atomicity: the OTP row (with its send-log entry) is written first, under the per-number limit,
// in one D1 batch; then the message is charged and created by sendMessages (its own batch). When
// the message cannot be created (402, 409, session gone, queue refused), the OTP write is undone,
// so a refused send leaves no OTP and no count behind. Writing the OTP first means a message is
// never sent with a code that has no OTP to verify it. A Worker killed between the two batches
// leaves a pending OTP without a message: it expires unused and counts once toward the limit.
// Once the message exists, a third batch records it as the OTP's attempt (otp_attempts) and its
// `message_id`; a Worker killed before that leaves a code on its way with no attempt shown and no
// failover (nothing else is lost: the message row is there, with the OTP's id).

/** Seconds for a `Retry-After` header until `at` (epoch ms), at least 1. */
function retryAfterSeconds(at: number, now: number): string {
  return String(Math.max(Math.ceil((at - now) / 1000), 1));
}

/**
 * The channel a code to `toNumber` (E.164 or a user id) goes out on first (docs/otp.md, Channels
 * and failover): the first of the app's `channels`, in list order, whose session is
 * `connected`, whose gateway sends to that kind of address (channels.ts `canAddress`; 422
 * `recipient_not_supported` when none does), and that is not kept from `toNumber` by the network's limits (channels.ts `reachesNumber`); when every
 * connected one is, the first connected one, whose send then answers 409 `session_limited`. On a
 * Cloud API session with the app's authentication template (channels.ts `codeChannelOf`).
 * 422 `app_has_no_channel` without channels (or when all their sessions were deleted), 409
 * `session_not_connected` when none is connected, 422 `app_has_no_otp_template` when the chosen
 * one is a Cloud API session and
 * the app has no `otp_template`: a channel that cannot carry codes is reported when it is the one
 * a code would take, rather than silently passed over for a backup; later channels are checked
 * only when a code fails over to them (src/otp/failover.ts skips one without a template).
 */
async function firstChannel(env: Env, db: Db, app: AppRow, toNumber: string): Promise<CodeChannel> {
  const channels = await channelsOf(env, db, app);
  if (channels.length === 0) {
    throw new ApiError(
      "app_has_no_channel",
      (app.channels ?? []).length === 0
        ? "The app has no channels (chatapp_session_id) to send codes through."
        : "The app's sessions were deleted; set other channels.",
    );
  }
  const connected = channels.filter((c) => c.status === "connected");
  const addressable = connected.filter((c) => canAddress(c, toNumber));
  const [first] = connected;
  if (first && addressable.length === 0)
    throw recipientNotSupported(gatewayRefusals(first.gateway, "The app's first connected channel"), [
      toNumber,
    ]);
  const now = Date.now();
  let channel = addressable[0];
  for (const candidate of addressable) {
    if (await reachesNumber(db, candidate, toNumber, now)) {
      channel = candidate;
      break;
    }
  }
  if (!channel) {
    const statuses = channels.map((c) => c.status).join(", ");
    throw new ApiError(
      "session_not_connected",
      channels.length === 1
        ? `The app's session is ${statuses}; it must be connected to send.`
        : `None of the app's channels is connected (${statuses}); one must be to send.`,
    );
  }
  if (!canCarryCode(channel, app)) {
    throw new ApiError(
      "app_has_no_otp_template",
      "The app's first connected channel is on the cloud_api gateway, which sends codes only as an authentication template: set the app's otp_template.",
    );
  }
  return codeChannelOf(env, db, app, channel);
}

/**
 * The per-number limit (docs/otp.md, Sending and verifying): `OTP_MAX_PER_NUMBER_PER_HOUR` codes to one
 * number from all the apps of one account together in a rolling hour (`OTP_RULES.perNumberWindowMs`), so
 * a second app does not double it.
 */
function perNumberLimit(env: Env): PerNumberLimit {
  return { limit: readConfig(env).OTP_MAX_PER_NUMBER_PER_HOUR, windowMs: OTP_RULES.perNumberWindowMs };
}

/** 429 `rate_limited` for the per-number limit, with `Retry-After` until a code may be sent again. */
async function perNumberLimited(
  db: Db,
  otp: { accountId: string; toNumber: string },
  perNumber: PerNumberLimit,
  now: number,
) {
  const freeAt = await perNumberFreeAt(db, otp.accountId, otp.toNumber, perNumber, now);
  const { limit } = perNumber;
  const detail = `This number has had ${limit} codes from this account's apps in the last hour.`;
  return new ApiError("rate_limited", detail, {
    headers: { "Retry-After": retryAfterSeconds(freeAt ?? now, now) },
  });
}

/**
 * Sends `code` to one number as an OTP message through `channel` (priority lane, charged like any
 * message): rendered into the app's text, or as its authentication template
 * (code-message.ts `codeSendRequest`). When the message cannot be created, `rollback` undoes the
 * OTP write first. A session deleted since {@link firstChannel} is `app_has_no_channel`; an
 * `otp_template` whose variables do not fit the cached template (not an authentication template)
 * is 422 `validation_failed` naming `otp_template`.
 * @returns the message id.
 */
async function deliverCode(
  env: Env,
  db: Db,
  send: { app: AppRow; channel: CodeChannel; toNumber: string; code: string; otpId: string },
  rollback: () => Promise<void>,
): Promise<string> {
  let result: Awaited<ReturnType<typeof sendMessages>>;
  try {
    result = await sendMessages(env, db, codeSendRequest(send.app, send.channel, send));
  } catch (error) {
    await undo(rollback, send.otpId);
    if (error instanceof ApiError && error.code === "not_found") {
      throw new ApiError("app_has_no_channel", "The app's session was deleted; set other channels.");
    }
    if (error instanceof ApiError && error.code === "validation_failed" && send.channel.template) {
      throw new ApiError("validation_failed", "The app's otp_template is not an authentication template.", {
        fields: {
          otp_template: Object.values(error.options.fields ?? {}).flat(),
        },
      });
    }
    throw error;
  }
  const [message] = result.rows;
  if (!message || message.status === "failed") {
    // sendMessages has failed and refunded the message (logged as enqueue_failed); 5xx, so a
    // retry with the same Idempotency-Key runs again.
    await undo(rollback, send.otpId);
    throw new ApiError(
      "internal_error",
      "The code could not be queued for sending; nothing was charged. Try again.",
    );
  }
  return message.id;
}

/**
 * Records the attempt that carried code number `sendSeq` (otp_attempts, and the message as
 * `otps.message_id`) and, when the app has a channel after this one, starts watching it for
 * failover (src/otp/failover.ts `firstWatch`). A watch that cannot be queued is logged
 * (`otp_failover_not_queued`), not answered as an error: the code is on its way, only its
 * failover is lost.
 */
async function recordAttempt(
  env: Env,
  db: Db,
  attempt: {
    app: AppRow;
    otpId: string;
    sendSeq: number;
    sessionId: string;
    messageId: string;
    code: string;
  },
): Promise<void> {
  const { app, otpId, sendSeq, sessionId } = attempt;
  const now = Date.now();
  const seq = await recordSentAttempt(db, {
    accountId: app.accountId,
    otpId,
    sendSeq,
    sessionId,
    messageId: attempt.messageId,
    now,
  });
  const next =
    seq && firstWatch(app, { otpId, sendSeq, attemptSeq: seq, sessionId, sentAt: now }, attempt.code);
  if (!next) return;
  try {
    await queueFailoverJob(env, next);
  } catch (error) {
    log.error("otp_failover_not_queued", { otp_id: otpId, error });
  }
}

/** Runs an undo after a failed send; an undo that fails too is logged, and the send's error wins. */
async function undo(action: () => Promise<void>, otpId: string): Promise<void> {
  try {
    await action();
  } catch (error) {
    log.error("otp_undo_failed", { otp_id: otpId, error });
  }
}

/**
 * Starts an OTP (`POST /v1/apps/{id}/otp`, docs/otp.md, Sending and verifying): a `code_size`-digit code,
 * rendered into the app's template and sent as a text message on the app's first connected
 * channel ({@link firstChannel}; on a Cloud API session, as the app's authentication template),
 * ahead of bulk sends, and recorded as the OTP's first attempt. When the app has channels after
 * that one, a failover job watches the attempt (src/otp/failover.ts). The code is returned to
 * nobody: only its HMAC is stored.
 *
 * @param input.toNumber the recipient: E.164, or a user id (docs/contacts.md, Contacts).
 * @returns the new OTP row, with its message id.
 * @throws ApiError `not_found` (no such live app), `otp_country_not_allowed` (422; the app's
 *   `allowed_countries`, checked before anything is written), `app_has_no_channel` (422),
 *   `session_not_connected` (409), `app_has_no_otp_template` (422, before anything is written),
 *   `recipient_not_supported` (422: no connected channel sends to that kind of user id, or an
 *   authentication template with a code button to a BSUID), `template_not_found` (422, nothing charged or kept), `rate_limited` (429, `Retry-After`; per-number limit),
 *   `insufficient_balance` (402). Error when `OTP_SECRET` is missing (→ 500).
 */
export async function sendOtp(
  env: Env,
  db: Db,
  input: { accountId: string; appId: string; toNumber: string },
): Promise<OtpRow> {
  const secret = otpSecret(env);
  const perNumber = perNumberLimit(env);
  const app = await findApp(db, input.accountId, input.appId);
  if (!app) throw new ApiError("not_found", "No such app.");
  await assertCountryAllowed(db, app.allowedCountries, { accountId: input.accountId, to: input.toNumber });
  const channel = await firstChannel(env, db, app, input.toNumber);

  const id = crypto.randomUUID();
  const code = generateCode(app.codeSize);
  const now = Date.now();
  const otp = await insertOtp(
    db,
    {
      id,
      accountId: input.accountId,
      appId: app.id,
      toNumber: input.toNumber,
      codeHmac: await codeHmac(secret, id, code),
      expiresAt: now + app.expirySeconds * 1000,
    },
    perNumber,
    now,
  );
  if (!otp)
    throw await perNumberLimited(
      db,
      { accountId: input.accountId, toNumber: input.toNumber },
      perNumber,
      now,
    );

  const messageId = await deliverCode(
    env,
    db,
    { app, channel, toNumber: input.toNumber, code, otpId: id },
    () => deleteOtp(db, input.accountId, id),
  );
  await recordAttempt(env, db, {
    app,
    otpId: id,
    sendSeq: otp.sends,
    sessionId: channel.sessionId,
    messageId,
    code,
  });
  return { ...otp, messageId };
}

/** 409 `otp_is_reverse`: a reverse OTP is verified by the user's message, never by a code sent or typed. */
export function reverseRefusal(): ApiError {
  return new ApiError(
    "otp_is_reverse",
    "This is a reverse OTP: the user's message to the session verifies it; it has no code to send or verify here.",
  );
}

/**
 * Why an OTP cannot have another code at `now`, as the error to answer; null when it can. Order:
 * verified (409), failed (429 `otp_attempts_exceeded`), expired (410: an expired OTP is over, a
 * new one must be started), 5 codes sent (429 `rate_limited`, no `Retry-After`: waiting does not
 * help), last code under 30 s old (429 `rate_limited`, `Retry-After` until the 30 s are up).
 */
function resendRefusal(otp: OtpRow, now: number): ApiError | null {
  switch (otpStatusAt(otp, now)) {
    case "verified":
      return new ApiError("otp_already_verified", "This OTP is already verified.");
    case "failed":
      return new ApiError(
        "otp_attempts_exceeded",
        "This OTP has failed after too many wrong codes; start a new one.",
        {
          extra: { attempts_remaining: 0 },
        },
      );
    case "expired":
      return new ApiError("otp_expired", "This OTP has expired; start a new one.");
    case "pending":
      break;
  }
  if (otp.sends >= OTP_RULES.maxSends) {
    return new ApiError("rate_limited", `This OTP has had ${OTP_RULES.maxSends} codes; start a new one.`, {
      extra: { sends_remaining: 0 },
    });
  }
  const allowedAt = otp.lastSentAt + OTP_RULES.resendIntervalMs;
  if (now < allowedAt) {
    return new ApiError(
      "rate_limited",
      `Codes of one OTP are sent at least ${OTP_RULES.resendIntervalMs / 1000} seconds apart.`,
      {
        headers: { "Retry-After": retryAfterSeconds(allowedAt, now) },
      },
    );
  }
  return null;
}

/**
 * Sends an OTP a new code (`POST /v1/otp/{id}/resend`, docs/otp.md, Sending and verifying): the old code
 * stops working, the expiry restarts from now with the app's current `expiry_seconds`, and the code goes
 * out on the app's first connected channel now ({@link firstChannel}), with its current template,
 * within its current `allowed_countries`, watched for failover as a first send is. Failed
 * attempts carry over. When the message cannot be created, the OTP is put back as it was (its
 * previous code still works).
 *
 * @returns the updated OTP row, with its new message id.
 * @throws ApiError `not_found` (no such OTP of the account, or its app was deleted), the
 *   refusals of {@link resendRefusal}, `otp_country_not_allowed` (the number's country left the
 *   app's `allowed_countries`), `rate_limited` (per-number limit), `app_has_no_channel`,
 *   `session_not_connected`, `app_has_no_otp_template`, `template_not_found`, `insufficient_balance`. Error when `OTP_SECRET` is missing (→ 500).
 */
export async function resendOtp(
  env: Env,
  db: Db,
  input: { accountId: string; otpId: string },
): Promise<OtpRow> {
  const secret = otpSecret(env);
  const perNumber = perNumberLimit(env);
  const current = await findOtp(db, input.accountId, input.otpId);
  if (!current) throw await missingRecord(db, input.accountId, "otps", input.otpId);
  const toNumber = current.toNumber;
  if (current.mode === "reverse" || toNumber === null) throw reverseRefusal();
  const refusal = resendRefusal(current, Date.now());
  if (refusal) throw refusal;
  const app = await findApp(db, input.accountId, current.appId);
  if (!app) throw new ApiError("not_found", "The OTP's app was deleted.");
  await assertCountryAllowed(db, app.allowedCountries, { accountId: current.accountId, to: toNumber });
  const channel = await firstChannel(env, db, app, toNumber);

  const code = generateCode(app.codeSize);
  const hmac = await codeHmac(secret, current.id, code);
  const now = Date.now();
  const claimed = await claimResend(
    db,
    { ...current, toNumber },
    { codeHmac: hmac, expiresAt: now + app.expirySeconds * 1000 },
    { perNumber, maxSends: OTP_RULES.maxSends, resendIntervalMs: OTP_RULES.resendIntervalMs },
    now,
  );
  if (!claimed) {
    // Either the OTP changed since it was read (a concurrent resend or verify) or the number is
    // at its limit: the fresh row tells which.
    const fresh = await findOtp(db, input.accountId, input.otpId);
    if (!fresh) throw new ApiError("not_found", "No such OTP.");
    const changed = resendRefusal(fresh, now);
    if (changed) throw changed;
    throw await perNumberLimited(db, { accountId: current.accountId, toNumber }, perNumber, now);
  }

  const messageId = await deliverCode(env, db, { app, channel, toNumber, code, otpId: current.id }, () =>
    undoResend(db, current, hmac, Date.now()),
  );
  await recordAttempt(env, db, {
    app,
    otpId: current.id,
    sendSeq: claimed.sends,
    sessionId: channel.sessionId,
    messageId,
    code,
  });
  return { ...claimed, messageId };
}
