import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { type MessageTemplateRow, messageTemplateSyncs, messageTemplates } from "../schema";

export type { MessageTemplateRow };

/**
 * Replaces session `sessionId`'s cached templates with `rows` (the whole list Meta gave) and
 * records the sync time `now` (epoch ms), in one batch: a template Meta no longer lists is gone.
 */
export async function replaceTemplates(
  db: Db,
  sessionId: string,
  rows: MessageTemplateRow[],
  now: number,
): Promise<void> {
  const sync = db
    .insert(messageTemplateSyncs)
    .values({ sessionId, syncedAt: now })
    .onConflictDoUpdate({ target: messageTemplateSyncs.sessionId, set: { syncedAt: now } });
  const clear = db.delete(messageTemplates).where(eq(messageTemplates.sessionId, sessionId));
  // D1 binds at most 100 parameters per statement: 12 columns a row → 8 rows an insert.
  const inserts = [];
  for (let i = 0; i < rows.length; i += 8)
    inserts.push(db.insert(messageTemplates).values(rows.slice(i, i + 8)));
  await db.batch([clear, ...inserts, sync]);
}

/** Caches one template (a create's answer), replacing the row of the same name and language. */
export async function upsertTemplate(db: Db, row: MessageTemplateRow): Promise<void> {
  const { sessionId: _s, name: _n, language: _l, ...set } = row;
  await db
    .insert(messageTemplates)
    .values(row)
    .onConflictDoUpdate({
      target: [messageTemplates.sessionId, messageTemplates.name, messageTemplates.language],
      set,
    });
}

/**
 * The cached templates of account `accountId`'s session `sessionId`, by name then language, and
 * when the list was last read whole from Meta (epoch ms, null when never).
 */
export async function cachedTemplates(
  db: Db,
  accountId: string,
  sessionId: string,
): Promise<{ rows: MessageTemplateRow[]; syncedAt: number | null }> {
  const [rows, sync] = await db.batch([
    db
      .select()
      .from(messageTemplates)
      .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId)))
      .orderBy(asc(messageTemplates.name), asc(messageTemplates.language)),
    db
      .select({ syncedAt: messageTemplateSyncs.syncedAt })
      .from(messageTemplateSyncs)
      .where(eq(messageTemplateSyncs.sessionId, sessionId)),
  ]);
  return { rows, syncedAt: sync[0]?.syncedAt ?? null };
}

/** Account `accountId`'s cached template `name` in `language` on session `sessionId`, or null. */
export async function findTemplate(
  db: Db,
  accountId: string,
  sessionId: string,
  name: string,
  language: string,
): Promise<MessageTemplateRow | null> {
  const [row] = await db
    .select()
    .from(messageTemplates)
    .where(
      and(
        eq(messageTemplates.accountId, accountId),
        eq(messageTemplates.sessionId, sessionId),
        eq(messageTemplates.name, name),
        eq(messageTemplates.language, language),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** Every cached row of Meta's template `templateId` in WABA `wabaId`, one per session that holds it. */
export function templateRowsOf(db: Db, wabaId: string, templateId: string): Promise<MessageTemplateRow[]> {
  return db
    .select()
    .from(messageTemplates)
    .where(and(eq(messageTemplates.wabaId, wabaId), eq(messageTemplates.templateId, templateId)));
}

/**
 * The statement that sets the status (and its reason, `at` as `synced_at`) of every cached row of
 * Meta's template `templateId` in WABA `wabaId` whose `status_at` is before `before` (epoch ms),
 * raising `status_at` to `statusAt` (epoch ms) where it is lower; a row whose status is as new
 * as `before` or newer is left as it is. Raw SQL, to run in a batch with its events.
 */
export function setTemplateStatusStatement(
  wabaId: string,
  templateId: string,
  change: { status: string; reason: string | null; at: number; statusAt: number; before: number },
): SQL {
  return sql`UPDATE ${messageTemplates} SET status = ${change.status}, reason = ${change.reason}, synced_at = ${change.at},
    status_at = MAX(status_at, ${change.statusAt})
    WHERE waba_id = ${wabaId} AND template_id = ${templateId} AND status_at < ${change.before}`;
}
