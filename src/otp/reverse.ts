import { charge } from "../billing/ledger";
import type { Condition, Db } from "../db/client";
import { findAccount } from "../db/queries/accounts";
import { type AppRow, findApp } from "../db/queries/apps";
import { phoneNumberOfContact } from "../db/queries/contacts";
import {
  insertReverseOtp,
  liveReverseCount,
  liveReverseOtps,
  markReverseVerified,
  type OtpRow,
  otpChangeOf,
  type ReverseVerification,
  reverseVerifiable,
  verifiedOnceMade,
  verifyReverseStatement,
} from "../db/queries/otps";
import {
  type ReverseGuess,
  type ReverseGuessMessage,
  recordOverLimit,
  recordReverseGuesses,
} from "../db/queries/reverse-guesses";
import { otps } from "../db/schema";
import { ApiError } from "../errors";
import { publishEvents } from "../events/publish";
import { eventsForRows, recordedIn } from "../events/record";
import type { ContactIdentity } from "../lib/contact-identity";
import { log } from "../lib/log";
import { toE164 } from "../lib/phone";
import { qrPngDataUri } from "../lib/qr-png";
import { renderTemplate } from "../lib/template";
import { channelsOf } from "./channels";
import { CODE_SIZE, codeHmac, codeLookup, generateCode, otpSecret } from "./code";
import { assertCountryAllowed } from "./countries";

// Reverse OTP (docs/otp.md, Reverse OTP): nothing is sent. The user sends the code to
// the app's session (a wa.me link or its QR code opens the chat with the text written in), and that
// incoming message verifies the OTP: the sender's number is what it proves. The code is stored only
// as HMACs keyed with OTP_SECRET (src/otp/code.ts): `code_hmac` as every OTP's, and `code_lookup`,
// by which an incoming message's candidate codes find the OTP on its session.

/** The rules of reverse OTPs, this API's own (docs/otp.md, Reverse OTP). */
export const REVERSE_RULES = {
  /**
   * Codes drawn for one new reverse OTP before giving up (503 `otp_codes_exhausted`): a code is
   * redrawn while a live reverse OTP of the session holds it.
   */
  maxCodeDraws: 5,
  /**
   * Candidate codes read from one incoming message (its first distinct digit runs of an app's
   * code sizes): a message stuffed with numbers tries no more guesses than this.
   */
  maxCandidates: 5,
  /**
   * Failed guesses (candidates that are the code of no live reverse OTP of the session, or of one
   * whose `to_number` is another number) a sender may send a session since a reverse OTP was
   * created, the current message's included; from this many on, the sender's messages verify
   * nothing of that OTP, and a right code from them is recorded on it as refused. With the
   * candidates of one message, at most `maxSenderFailures - 1 + maxCandidates` (14) codes of one
   * number are ever tried against an OTP: with {@link REVERSE_RULES}.minOpenCodeSize digits, odds
   * of at most 14 in a million.
   */
  maxSenderFailures: 10,
  /**
   * The shortest `code_size` (digits) of a reverse OTP without `to_number`, which any number may
   * verify: the code is then the only secret (422 `validation_failed` naming `to_number` below).
   */
  minOpenCodeSize: 6,
  /**
   * Live (pending, unexpired) reverse OTPs one session may hold: every one is a target for each
   * guess a message carries. A create beyond is 409 `account_limit_reached` (limit
   * `max_live_reverse_otps`). This API's own choice: at the default `expiry_seconds` (600) it
   * allows 50 new ones a minute that nobody verifies, and more that users complete (a verified
   * OTP is no longer live); an app that needs more uses another app on another session.
   */
  maxLivePerSession: 500,
  /**
   * Ms the failed guesses are kept (src/db/schema/otp.ts `reverseGuesses`): longer than any OTP
   * lives (`expiry_seconds` at most 3,600, src/routes/apps/apps.schemas.ts `EXPIRY_SECONDS`), so
   * every guess since a live OTP's creation is still counted.
   */
  guessRetentionMs: 2 * 3_600_000,
} as const;

/**
 * The candidate codes of an incoming text: its maximal runs of ASCII digits that are
 * `CODE_SIZE.min`–`CODE_SIZE.max` long (any app's code size), each once, in the order they appear,
 * at most {@link REVERSE_RULES}.maxCandidates. `"Code 482913, order 12"` → `["482913"]`.
 */
export function codeCandidates(text: string): string[] {
  const runs = text.match(/[0-9]+/g) ?? [];
  const sized = runs.filter((run) => run.length >= CODE_SIZE.min && run.length <= CODE_SIZE.max);
  return [...new Set(sized)].slice(0, REVERSE_RULES.maxCandidates);
}

/**
 * WhatsApp's click-to-chat link (WhatsApp Help Center, "How to use click to chat":
 * `https://wa.me/<number>?text=<urlencodedtext>`, the number in international format, digits
 * only): it opens a chat with `phoneNumber` with `text` written in.
 *
 * @param phoneNumber E.164 (or any form: only its digits are kept).
 */
export function waMeLink(phoneNumber: string, text: string): string {
  return `https://wa.me/${phoneNumber.replace(/\D/g, "")}?text=${encodeURIComponent(text)}`;
}

/** A new reverse OTP with what only its create response shows. */
export interface CreatedReverseOtp {
  otp: OtpRow;
  /** The digits, `code_size` long. */
  code: string;
  /** {@link waMeLink} to the session's number with the app's `message_template` rendered. */
  link: string;
  /** `link` as a QR code: `data:image/png;base64,…` (src/lib/qr-png.ts). */
  qrCode: string;
}

/**
 * The session a reverse OTP is verified on: the app's first channel that is `connected` (src/otp/
 * channels.ts), with its number. 422 `app_has_no_channel` when the app has no channel (or all were
 * deleted), 409 `session_not_connected` when none is connected.
 */
async function reverseChannel(env: Env, db: Db, app: AppRow) {
  const channels = await channelsOf(env, db, app);
  if (channels.length === 0) {
    throw new ApiError("app_has_no_channel", "The app has no session for users to send their codes to.");
  }
  const channel = channels.find((c) => c.status === "connected");
  if (!channel) {
    throw new ApiError(
      "session_not_connected",
      `None of the app's sessions is connected (${channels.map((c) => c.status).join(", ")}); a reverse OTP needs one to receive the code.`,
    );
  }
  if (channel.phoneNumber === null) {
    throw new ApiError("session_not_connected", "The app's connected session has no phone number yet.");
  }
  return { sessionId: channel.sessionId, phoneNumber: channel.phoneNumber };
}

/**
 * Starts a reverse OTP (`POST /v1/apps/{id}/otp` with `mode: "reverse"`, docs/otp.md, Reverse
 * OTP): a `code_size`-digit code the user sends to the app's first connected session, where
 * the incoming message verifies it ({@link verifyByIncoming}). Nothing is sent and nothing charged
 * now: no message, no send log, no count toward the per-number limit. The code is unique among the
 * session's live reverse OTPs (drawn again while taken, {@link REVERSE_RULES}.maxCodeDraws times),
 * and the session holds at most {@link REVERSE_RULES}.maxLivePerSession of them (docs/security.md,
 * Reverse OTP guessing).
 *
 * @param input.toNumber E.164 or a user id (docs/contacts.md, Contacts): the only sender whose message can
 *   verify it; null for anyone.
 * @param now epoch ms; the OTP expires `expiry_seconds` after it.
 * @returns the OTP row (`pending`, `mode` `reverse`) with the code, its link and QR code, which
 *   nothing stores (but the Idempotency-Key's stored response: src/middleware/idempotency.ts).
 * @throws ApiError `not_found` (no such live app), `validation_failed` (422 naming `to_number`:
 *   none given and the app's `code_size` below {@link REVERSE_RULES}.minOpenCodeSize),
 *   `otp_country_not_allowed` (422, `to_number` outside `allowed_countries`),
 *   `app_has_no_channel` (422), `session_not_connected` (409), `insufficient_balance` (402, balance
 *   below the app's `reverse_price`), `account_limit_reached` (409, limit `max_live_reverse_otps`:
 *   the session holds {@link REVERSE_RULES}.maxLivePerSession live reverse OTPs),
 *   `otp_codes_exhausted` (503); nothing written for any. Error when `OTP_SECRET` is missing (→ 500).
 */
export async function createReverseOtp(
  env: Env,
  db: Db,
  input: { accountId: string; appId: string; toNumber: string | null },
  now: number = Date.now(),
): Promise<CreatedReverseOtp> {
  const secret = otpSecret(env);
  const app = await findApp(db, input.accountId, input.appId);
  if (!app) throw new ApiError("not_found", "No such app.");
  if (input.toNumber === null && app.codeSize < REVERSE_RULES.minOpenCodeSize) {
    const rule = `A reverse OTP any number may verify needs a code of at least ${REVERSE_RULES.minOpenCodeSize} digits; the app's code_size is ${app.codeSize}.`;
    throw new ApiError("validation_failed", `${rule} Give to_number, or raise the app's code_size.`, {
      fields: { to_number: [`Required: ${rule}`] },
    });
  }
  if (input.toNumber !== null)
    await assertCountryAllowed(db, app.allowedCountries, { accountId: input.accountId, to: input.toNumber });
  const channel = await reverseChannel(env, db, app);
  if (app.reversePrice > 0) {
    // A read, not a hold: the charge is made when the user's message verifies the OTP.
    const balance = (await findAccount(db, input.accountId))?.balance ?? 0;
    if (balance < app.reversePrice) {
      throw new ApiError(
        "insufficient_balance",
        `A reverse OTP of this app costs ${app.reversePrice} minor units when verified, more than the balance (${balance}).`,
      );
    }
  }

  const max = REVERSE_RULES.maxLivePerSession;
  const assertUnderCap = async () => {
    const current = await liveReverseCount(db, input.accountId, channel.sessionId, now);
    if (current >= max) {
      throw new ApiError(
        "account_limit_reached",
        `The app's session holds ${current} live reverse OTPs, its max_live_reverse_otps of ${max}: wait for some to be verified or expire.`,
        { extra: { limit: "max_live_reverse_otps", max, current } },
      );
    }
  };
  await assertUnderCap();
  for (let draw = 0; draw < REVERSE_RULES.maxCodeDraws; draw++) {
    const id = crypto.randomUUID();
    const code = generateCode(app.codeSize);
    const otp = await insertReverseOtp(
      db,
      {
        id,
        accountId: input.accountId,
        appId: app.id,
        sessionId: channel.sessionId,
        toNumber: input.toNumber,
        codeHmac: await codeHmac(secret, id, code),
        codeLookup: await codeLookup(secret, channel.sessionId, code),
        expiresAt: now + app.expirySeconds * 1000,
      },
      max,
      now,
    );
    if (!otp) {
      // The code was taken, or another create took the last slot since the check above.
      await assertUnderCap();
      continue;
    }
    const link = waMeLink(
      channel.phoneNumber,
      renderTemplate(app.messageTemplate, { code, app_name: app.name }),
    );
    return { otp, code, link, qrCode: qrPngDataUri(link) };
  }
  throw new ApiError(
    "otp_codes_exhausted",
    `The session holds so many live reverse OTPs that ${REVERSE_RULES.maxCodeDraws} codes of ${app.codeSize} digits drawn in a row were all taken. Try again, or raise the app's code_size.`,
  );
}

/** An incoming message, as {@link verifyByIncoming} reads it (src/messages/receive.ts stores it). */
export interface IncomingText {
  accountId: string;
  /** The session (uuid) it reached. */
  sessionId: string;
  /** The sender as the gateway named them; their number is normalised to E.164 as receive.ts does. */
  contact: ContactIdentity;
  content: string | null;
  /**
   * The gateway's id of the message, by which receive.ts stores it once; a message without one
   * is counted as new at each delivery, as it is stored.
   */
  providerMessageId?: string | null;
  /** When the message was sent, by the gateway's clock (epoch ms, often whole seconds). */
  at: number;
}

/**
 * Verifies, by its charge or without one, the reverse OTP of `v`: with a `price` (minor units)
 * above 0, the charge (src/billing/ledger.ts, cause the OTP) and the verify are one D1 batch, the
 * verify its effect and the charge guarded by the OTP still being verifiable, so a message
 * delivered again charges nothing more. When the balance no longer covers the price, the OTP is
 * verified all the same (the user did send the code) and nothing is charged, logged as
 * `reverse_otp_uncharged`. The `otp.verified` event is in the verify's batch.
 *
 * @returns the verified row, or null when it was no longer verifiable (verified, expired).
 */
async function verifyMatch(
  env: Env,
  db: Db,
  v: ReverseVerification,
  price: number,
  now: number,
): Promise<OtpRow | null> {
  const verifiedEvent = (condition: Condition) => eventsForRows("otp.verified", otps, condition);
  let balance: number | null = null;
  if (price > 0) {
    const charged = await charge(
      env,
      db,
      {
        id: crypto.randomUUID(),
        accountId: v.accountId,
        amount: price,
        messageCount: 0,
        now,
        guard: reverseVerifiable(v, now),
        cause: { otpId: v.id },
      },
      (made) => [verifyReverseStatement(v, now, made), verifiedEvent(verifiedOnceMade(v.id, made))],
    );
    if (charged.ok) {
      const change = otpChangeOf(charged.results);
      if (!change) return null;
      await publishEvents(env, recordedIn(change.effects, [0]));
      return change.otp;
    }
    // Refused with the balance covering the price: the guard failed (verified or expired since).
    if (charged.reason === "no_account" || charged.balance >= price) return null;
    balance = charged.balance;
  }
  const change = await markReverseVerified(db, v, now, (verified) => [verifiedEvent(verified)]);
  if (!change) return null;
  if (balance !== null) {
    log.warn("reverse_otp_uncharged", { otp_id: v.id, account_id: v.accountId, price, balance });
  }
  await publishEvents(env, recordedIn(change.effects, [0]));
  return change.otp;
}

/**
 * The number (E.164) of an incoming message's sender: the one the message comes with, else, for a
 * user named by a user id alone, the one the session's contact known by that id has: learnt from
 * the network before this message was read (a gateway's lookup, as WAHA's LID lookup right after
 * the message is stored, or an earlier message naming both; docs/contacts.md, Contacts). Null when neither
 * is known.
 */
async function senderNumber(db: Db, message: IncomingText): Promise<string | null> {
  const given = toE164(message.contact.phoneNumber ?? "");
  if (given !== null || !message.contact.userId) return given;
  const known = await phoneNumberOfContact(db, message.sessionId, { userId: message.contact.userId });
  return known ?? null;
}

/** Epoch ms `at` down to its whole second: gateways date messages to the second. */
const wholeSecond = (at: number) => at - (at % 1000);

/**
 * Verifies the reverse OTP an incoming message carries the code of (docs/otp.md, Reverse
 * OTP). The message's candidate codes ({@link codeCandidates}) are looked up on its session
 * by their `code_lookup`; of the live reverse OTPs found, the first in the text's order that this
 * message may verify becomes `verified`, with `verified_number` the sender's number (E.164, as
 * src/messages/receive.ts normalises it; for a user named by a user id alone, the number their
 * contact is known by ({@link senderNumber}), null while none is),
 * `verified_user_id` their user id when the network gave one (docs/contacts.md, Contacts), and `verified_at`
 * `now`, its `otp.verified` event and, for an app with a `reverse_price`, its charge in the same
 * batch. An OTP with a `to_number` is verified only by a message from that number, so known, and
 * one with a `to_user_id` only by a message from that user id. One
 * message verifies at most one OTP. A message without a sender or candidate, or one after
 * `expires_at`, changes nothing.
 *
 * Guessing (docs/security.md, Reverse OTP guessing): while the session has a live reverse OTP,
 * each candidate that verifies nothing is recorded (src/db/queries/reverse-guesses.ts): the code
 * of no live OTP (`no_match`) or of one whose `to_number` is another number (`wrong_sender`) is a
 * failed guess of the sender; an OTP's own code in a message dated (`message.at`) before the
 * second the OTP was created in (`before_creation`: a replayed old message), or from a sender with
 * {@link REVERSE_RULES}.maxSenderFailures failed guesses on the session since the OTP was created,
 * this message's included (`over_limit`), verifies nothing. Candidates that matched an OTP are
 * counted on it as refused messages (its `failed_attempts`, the API's `refused_messages`). The
 * failed-guess count is read in the verification's own statement, so messages racing each other
 * cannot slip past it.
 *
 * Safe to run again for the same message (a gateway's redelivery, which receive.ts stores once):
 * every write is conditional on the OTP still being pending, and a candidate is recorded once per
 * message (by `providerMessageId`), so nothing is verified, charged or counted twice, and a run
 * lost after the message was stored is made good by the redelivery. Callers run it for duplicates
 * too for that reason.
 *
 * @param now epoch ms: the time of the verification (not the gateway's time of the message).
 * @returns the verified OTP, or null when the message verified none. Without `OTP_SECRET` no
 *   reverse OTP can exist: null, nothing read.
 */
export async function verifyByIncoming(
  env: Env,
  db: Db,
  message: IncomingText,
  now: number = Date.now(),
): Promise<OtpRow | null> {
  const candidates = codeCandidates(message.content ?? "");
  if (candidates.length === 0) return null;
  let secret: string;
  try {
    secret = otpSecret(env);
  } catch {
    return null;
  }
  // The sender's number when known (what a `to_number` is checked against), else their user id.
  const userId = message.contact.userId ?? null;
  const sender = (await senderNumber(db, message)) ?? userId;
  if (sender === null) return null;
  const lookups = await Promise.all(candidates.map((code) => codeLookup(secret, message.sessionId, code)));
  const found = await liveReverseOtps(db, message.accountId, message.sessionId, lookups, now);
  const guesses: ReverseGuess[] = [];
  const eligible: { lookup: string; otp: OtpRow; reversePrice: number }[] = [];
  for (const lookup of lookups) {
    const match = found.find((candidate) => candidate.otp.codeLookup === lookup);
    if (!match) {
      guesses.push({ codeLookup: lookup, outcome: "no_match", otpId: null });
    } else if (
      match.otp.toNumber !== null &&
      match.otp.toNumber !== sender &&
      match.otp.toNumber !== userId
    ) {
      guesses.push({ codeLookup: lookup, outcome: "wrong_sender", otpId: match.otp.id });
    } else if (message.at < wholeSecond(match.otp.createdAt)) {
      guesses.push({ codeLookup: lookup, outcome: "before_creation", otpId: match.otp.id });
    } else {
      eligible.push({ lookup, ...match });
    }
  }
  const from: ReverseGuessMessage = {
    accountId: message.accountId,
    sessionId: message.sessionId,
    messageKey: message.providerMessageId ?? crypto.randomUUID(),
    sender,
  };
  // Recorded before any verification, so that this message's failed guesses count against it.
  await recordReverseGuesses(db, from, guesses, now);
  for (const { lookup, otp, reversePrice } of eligible) {
    const verified = await verifyMatch(
      env,
      db,
      {
        accountId: message.accountId,
        id: otp.id,
        sessionId: message.sessionId,
        codeLookup: lookup,
        sender,
        senderUserId: userId,
        maxFailures: REVERSE_RULES.maxSenderFailures,
      },
      reversePrice,
      now,
    );
    if (verified) return verified;
    // Not verified: recorded as refused when the sender is past its failed guesses (not when
    // the OTP was verified or expired meanwhile).
    await recordOverLimit(
      db,
      from,
      { otpId: otp.id, codeLookup: lookup },
      REVERSE_RULES.maxSenderFailures,
      now,
    );
  }
  return null;
}
