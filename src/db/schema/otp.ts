import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
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
    chatappSessionId: text(),
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
 * One-time codes sent through an app (README, One-time codes). The code itself is never
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
    /** The message that carried the latest code; null until it is created. No foreign key, as on messages. */
    messageId: text(),
    toNumber: text().notNull(),
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
  (t) => [index("otps_account").on(t.accountId, t.createdAt)],
);

/**
 * Every code sent (first sends and resends), the log that the per-number limit counts
 * (`OTP_MAX_PER_NUMBER_PER_HOUR` per account and number in a rolling hour: the sends of every
 * app of the account, found through `apps.account_id`). `seq` is the send's
 * number within its OTP (1–5), so one OTP cannot log the same send twice.
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
  ],
);
