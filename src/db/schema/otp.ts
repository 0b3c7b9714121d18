import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// One-time codes: the apps that send them, the codes and the log of every send. Conventions of
// every table: see index.ts.

/** An app's authentication template: its name and language, as Meta's message template names them. */
export interface OtpTemplate {
  name: string;
  language: string;
}

/**
 * One-time-code settings (the `App` schema of openapi.json). Deleting sets `deleted_at` (soft
 * delete).
 */
export const apps = sqliteTable(
  "apps",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    name: text().notNull(),
    senderId: text().notNull(),
    messageTemplate: text().notNull(),
    codeSize: integer().notNull().default(6),
    /** Seconds an OTP stays valid (60–3,600; default 600). */
    expirySeconds: integer().notNull().default(600),
    /** The first of `channels` (interface document §4.3 `chatapp_session_id`), kept with them. */
    chatappSessionId: text(),
    /**
     * JSON array of 1–5 session ids, in the order codes try them (src/otp/channels.ts); null when
     * the app has no session. `chatapp_session_id` is its first element.
     */
    channels: text({ mode: "json" }).$type<string[]>(),
    /** Seconds without a `delivered` ack before a code goes out on the next channel (5–300; default 15). */
    failoverAfterSeconds: integer().notNull().default(15),
    /** Minor units charged when a reverse OTP is verified (default 0). */
    reversePrice: integer().notNull().default(0),
    /**
     * JSON array of upper-case ISO 3166-1 alpha-2 codes: the countries whose numbers may be sent
     * codes (src/otp/countries.ts). Null means every country.
     */
    allowedCountries: text({ mode: "json" }).$type<string[]>(),
    /**
     * JSON `{ name, language }`: the approved authentication template a Cloud API session sends
     * codes with (src/otp/send.ts). Null: none (codes on other gateways go as text).
     */
    otpTemplate: text({ mode: "json" }).$type<OtpTemplate>(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    deletedAt: integer(),
  },
  (t) => [index("apps_account_live").on(t.accountId, t.deletedAt, t.createdAt, t.id)],
);

/**
 * One-time codes sent through an app (docs/otp.md, Sending and verifying). The code itself is never
 * stored: `code_hmac` is HMAC-SHA256 (hex) of `${id}:${code}` keyed with the `OTP_SECRET`
 * secret (src/otp/code.ts), so the row cannot be turned back into a code without the key.
 * `status` is stored as `expired` only once a verify finds it so; readers treat a `pending` row
 * past `expires_at` as expired too.
 */
export const otps = sqliteTable(
  "otps",
  {
    id: text().primaryKey(),
    accountId: text()
      .notNull()
      .references(() => accounts.id),
    appId: text()
      .notNull()
      .references(() => apps.id),
    /**
     * The latest message carrying the current code (a failover's once one happened); null until it
     * is created. No foreign key, as on messages.
     */
    messageId: text(),
    /**
     * `send`: the service sends the code; `reverse`: nothing is sent, the user sends the code to
     * the session (src/otp/reverse.ts).
     */
    mode: text({ enum: ["send", "reverse"] })
      .notNull()
      .default("send"),
    /** A reverse OTP: the session whose incoming messages can verify it. Null for `send`. */
    sessionId: text(),
    /**
     * A reverse OTP: HMAC-SHA256 (hex) of the session id and the code keyed with `OTP_SECRET`
     * (src/otp/code.ts), so an incoming text's candidate codes find the OTP by index without the
     * code being stored. Null for `send`.
     */
    codeLookup: text(),
    /** The E.164 number whose message verified a reverse OTP; null otherwise, or when the sender's number is not known. */
    verifiedNumber: text(),
    /**
     * The user id (BSUID or LID) of the contact whose message verified a reverse OTP, when the network gave
     * one (docs/contacts.md, Contacts).
     */
    verifiedUserId: text(),
    /** E.164. Null only for a reverse OTP that any number may verify. */
    toNumber: text(),
    codeHmac: text().notNull(),
    status: text({ enum: ["pending", "verified", "failed", "expired"] }).notNull(),
    failedAttempts: integer().notNull().default(0),
    /** Codes sent for this OTP, the first included (at most 5). */
    sends: integer().notNull().default(1),
    lastSentAt: integer().notNull(),
    expiresAt: integer().notNull(),
    verifiedAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
  },
  (t) => [
    index("otps_account").on(t.accountId, t.createdAt),
    index("otps_app").on(t.appId, t.createdAt),
    index("otps_code_lookup").on(t.sessionId, t.codeLookup),
    // The live reverse OTPs of a session, counted against `REVERSE_RULES.maxLivePerSession`.
    index("otps_session_live").on(t.sessionId, t.status, t.expiresAt),
  ],
);

/**
 * What became of a candidate code of an incoming message (src/otp/reverse.ts `verifyByIncoming`)
 * that verified nothing. `no_match` and `wrong_sender` are failed guesses, counted against the
 * sender (`REVERSE_RULES.maxSenderFailures`); `over_limit` and `before_creation` are the right code
 * refused, recorded on its OTP only.
 */
export const REVERSE_GUESS_OUTCOMES = [
  /** The code of no live reverse OTP of the session. */
  "no_match",
  /** The code of a live reverse OTP whose `to_number` is another number. */
  "wrong_sender",
  /** The code of a live reverse OTP, from a sender past its failed guesses. */
  "over_limit",
  /** The code of a live reverse OTP, in a message dated before the OTP was created. */
  "before_creation",
] as const;

/**
 * The candidate codes of incoming messages that verified nothing while their session had a live
 * reverse OTP (docs/otp.md, Reverse OTP): one row per message (`message_key`, the
 * gateway's message id) and candidate (`code_lookup`, src/otp/code.ts `codeLookup`), so a message
 * the gateway delivers again adds nothing. `otp_id` is the OTP the candidate matched, null for
 * `no_match`. `at` is when the service read it (epoch ms). Kept `REVERSE_RULES.guessRetentionMs`,
 * longer than any OTP lives (hourly job `purge_reverse_guesses`, src/jobs/hourly.ts).
 */
export const reverseGuesses = sqliteTable(
  "reverse_guesses",
  {
    sessionId: text().notNull(),
    messageKey: text().notNull(),
    codeLookup: text().notNull(),
    /** E.164. */
    sender: text().notNull(),
    otpId: text(),
    outcome: text({ enum: REVERSE_GUESS_OUTCOMES }).notNull(),
    at: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.messageKey, t.codeLookup] }),
    index("reverse_guesses_sender").on(t.sessionId, t.sender, t.at),
    index("reverse_guesses_otp").on(t.otpId),
    index("reverse_guesses_at").on(t.at),
  ],
);

/**
 * Every message an OTP's codes went out in, one per channel tried (docs/otp.md, Channels
 * and failover): attempt `seq` (1, 2, …, across resends) carried code number `send_seq`
 * (`otps.sends` when it went out) through session `session_id` as message `message_id`. The
 * message row holds the status and times the API shows with the attempt. `(otp_id, send_seq,
 * session_id)` is unique: one code goes out on a channel once, so a redelivered failover job adds
 * nothing.
 */
export const otpAttempts = sqliteTable(
  "otp_attempts",
  {
    otpId: text()
      .notNull()
      .references(() => otps.id),
    seq: integer().notNull(),
    sendSeq: integer().notNull(),
    sessionId: text().notNull(),
    /** Null until the message is created (the attempt is claimed first). */
    messageId: text(),
    createdAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.otpId, t.seq] }),
    uniqueIndex("otp_attempts_channel").on(t.otpId, t.sendSeq, t.sessionId),
  ],
);

/**
 * Every code sent (first sends and resends), the log that the per-number limit counts
 * (`OTP_MAX_PER_NUMBER_PER_HOUR` per account and number in a rolling hour: the sends of every
 * app of the account, found through `apps.account_id`). `seq` is the send's
 * number within its OTP (1–5), so one OTP cannot log the same send twice. Kept for the window
 * only (hourly job `purge_otp_sends`): nothing else reads it.
 */
export const otpSends = sqliteTable(
  "otp_sends",
  {
    otpId: text()
      .notNull()
      .references(() => otps.id),
    seq: integer().notNull(),
    appId: text().notNull(),
    toNumber: text().notNull(),
    sentAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.otpId, t.seq] }),
    index("otp_sends_app_number").on(t.appId, t.toNumber, t.sentAt),
    // The hourly purge of sends older than the window (src/db/queries/otp-sends.ts `purgeOtpSends`).
    index("otp_sends_sent").on(t.sentAt),
  ],
);

/**
 * The OTP statistics of archived OTPs (docs/otp.md, OTP statistics): as the hourly job
 * `archive_messages` moves an app's final OTPs out of D1 (src/archives/otps.ts), it adds them here,
 * per UTC hour of their start (`start`, epoch ms), mode and channel (`''` for none), with their
 * statuses as they were then, final (a `pending` OTP past its expiry counted `expired`).
 * `GET /v1/apps/{id}/otp-stats` adds these to the counts of the OTPs still in D1
 * (src/db/queries/otp-stats.ts). `WITHOUT ROWID` (migrations/accounts/0056_otp_archives.sql).
 */
export const otpStatsHours = sqliteTable(
  "otp_stats_hours",
  {
    appId: text().notNull(),
    start: integer().notNull(),
    mode: text({ enum: ["send", "reverse"] }).notNull(),
    channel: text().notNull(),
    sent: integer().notNull(),
    delivered: integer().notNull(),
    verified: integer().notNull(),
    failed: integer().notNull(),
    expired: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.start, t.mode, t.channel] })],
);

/**
 * How long the archived verified OTPs of an app took to be verified, per UTC hour of their start
 * (`start`, epoch ms): `count` of them took `seconds` whole seconds (from start to `verified_at`,
 * rounded down), so a bucket's median over archived OTPs is exact to the second whatever their
 * number (at most 3,600 rows an hour: an OTP lives an hour at most). Written with
 * {@link otpStatsHours}. `WITHOUT ROWID` (migrations/accounts/0056_otp_archives.sql).
 */
export const otpVerifyTimes = sqliteTable(
  "otp_verify_times",
  {
    appId: text().notNull(),
    start: integer().notNull(),
    seconds: integer().notNull(),
    count: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.start, t.seconds] })],
);
