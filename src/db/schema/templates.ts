import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { sessions } from "./sessions";

// The message templates of a Cloud API session's WhatsApp Business Account, as Meta last showed
// them. Conventions of every table: see index.ts.

/**
 * One template of a `cloud_api` session's WABA, cached from `GET /{version}/{waba_id}/message_templates`
 * (Meta's OpenAPI document, business-messaging-api_v23.0.yaml): `template_id` is Meta's `id`,
 * `language` its locale code (`en_US`), `category` `AUTHENTICATION`, `MARKETING` or `UTILITY`,
 * `status` Meta's (`APPROVED`, `PENDING`, `REJECTED`, `PAUSED`, `DISABLED`…), `components` the
 * JSON array Meta gave, `reason` the last status update's reason (or null). Keyed by session,
 * name and language: Meta names a template by the pair. `synced_at` is when Meta last gave the
 * row (a sync, a create, or a status webhook), epoch ms. `status_at` is the time of the status the
 * row holds, epoch ms: the sync's or create's time, or the `entry.time` of the status webhook
 * that set it (Meta's seconds × 1,000); an update older than it changes nothing
 * (src/gateways/cloud-api/template-status.ts). Goes with its session.
 */
export const messageTemplates = sqliteTable(
  "message_templates",
  {
    sessionId: text()
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    accountId: text().notNull(),
    wabaId: text().notNull(),
    templateId: text().notNull(),
    name: text().notNull(),
    language: text().notNull(),
    category: text().notNull(),
    status: text().notNull(),
    components: text().notNull().default("[]"),
    reason: text(),
    syncedAt: integer().notNull(),
    statusAt: integer().notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.name, t.language] }),
    index("message_templates_waba_template").on(t.wabaId, t.templateId),
  ],
);

/**
 * When each Cloud API session's template list was last read whole from Meta (epoch ms): the
 * cache is fresh for `TEMPLATE_CACHE_SECONDS` after it (src/gateways/cloud-api/templates.ts).
 */
export const messageTemplateSyncs = sqliteTable("message_template_syncs", {
  sessionId: text()
    .primaryKey()
    .references(() => sessions.id, { onDelete: "cascade" }),
  syncedAt: integer().notNull(),
});

/** A row of {@link messageTemplates}, as Drizzle reads it. */
export type MessageTemplateRow = typeof messageTemplates.$inferSelect;
