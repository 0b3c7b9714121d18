import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sessions } from "./sessions";

// The WhatsApp Cloud API's side of a session: the business number it sends from. Conventions of
// every table: see index.ts.

/**
 * The business phone number a `cloud_api` session is linked to, by Meta's ids: `phone_number_id`
 * (the Graph API's Phone-Number-ID, unique here: one session per number, and how Meta's webhooks
 * find their session), `waba_id` (the WhatsApp Business Account that owns the number and its
 * templates). `access_token_sealed` is the access token sealed with AES-256-GCM under
 * `CREDENTIALS_KEY`, bound to the session id (lib/sealed-secret.ts): the token is never stored in
 * clear. `throughput_mps`: messages per second the number may send (Meta, "Throughput": 80, or
 * 1,000 at the higher tier). The row goes with its session (`ON DELETE CASCADE`).
 */
export const cloudApiNumbers = sqliteTable(
  "cloud_api_numbers",
  {
    sessionId: text()
      .primaryKey()
      .references(() => sessions.id, { onDelete: "cascade" }),
    accountId: text().notNull(),
    phoneNumberId: text().notNull(),
    wabaId: text().notNull(),
    accessTokenSealed: text().notNull(),
    throughputMps: integer().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [
    uniqueIndex("cloud_api_numbers_phone_number_id").on(t.phoneNumberId),
    index("cloud_api_numbers_waba").on(t.wabaId),
  ],
);
