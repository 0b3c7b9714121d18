import { z } from "zod";
import { batchSql, type Db } from "../../db/client";
import { databaseFor, everyAccountDatabase } from "../../db/databases";
import { numbersOfWaba } from "../../db/queries/cloud-api";
import { setTemplateStatusStatement, templateRowsOf } from "../../db/queries/templates";
import { publishEvents } from "../../events/publish";
import { insertEventStatement, newEventId, recordedIn } from "../../events/record";
import { log } from "../../lib/log";

/*
 * Meta's `message_template_status_update` webhook field: a template's review moved. Meta's OpenAPI
 * document does not describe this field (its `Change.field` lists only `messages` and the group
 * fields), so the value is read as Meta's webhook reference gives it ("Webhooks → Components →
 * message_template_status_update"): `event` (the new status: `APPROVED`, `REJECTED`, `PENDING`,
 * `PAUSED`, `DISABLED`, `FLAGGED`, `REINSTATED`, `PENDING_DELETION`…), `message_template_id`
 * (a number in Meta's examples), `message_template_name`, `message_template_language` and
 * `reason` (`NONE` when there is none). The same reference gives the webhook entry a `time`, when
 * the webhook was triggered (Unix seconds): Meta delivers updates in no set order and retries them
 * for days, so an update is applied only to cache rows whose status is older than it.
 */

const TemplateStatusValue = z.looseObject({
  event: z.string().min(1).max(64),
  message_template_id: z.union([z.string().min(1).max(64), z.number().int().nonnegative()]),
  message_template_name: z.string().max(512).optional(),
  message_template_language: z.string().max(32).optional(),
  reason: z.string().max(1024).nullish(),
});

/** What {@link applyTemplateStatusUpdate} did: the cache rows it moved and the events it recorded. */
export interface TemplateStatusResult {
  /** False when `value` is not a status update Meta documents (nothing was done). */
  valid: boolean;
  rowsUpdated: number;
  eventsRecorded: number;
}

/**
 * Applies one `message_template_status_update` change (`value`, the change's `value`) of WABA
 * `wabaId` (the webhook entry's `id`), triggered at `time` (the entry's `time`, Unix seconds; null
 * when the entry has none: then it counts as received now). The new status (and reason, `NONE`
 * read as none) goes into the cache of every session of that WABA that holds the template, except
 * the rows whose status is newer (`status_at` in a later second than `time`: a sync or an update
 * that came after it); a `template.status_changed` event is recorded, in the same D1 batch, once
 * for each account with a session of the WABA whose cache did not already show that status and
 * holds a row older than the update (a redelivered or stale update records nothing; an account
 * that never listed its templates is told too). docs/gateways.md, "Message templates". The events are then
 * published to webhook endpoints. A value that is not the documented shape is ignored (logged);
 * D1 failures throw, so the caller may answer Meta with an error and be sent the update again;
 * so does an account of the WABA that is moving between databases (AccountMoving).
 */
export async function applyTemplateStatusUpdate(
  env: Env,
  wabaId: string,
  value: unknown,
  time: number | null = null,
): Promise<TemplateStatusResult> {
  const parsed = TemplateStatusValue.safeParse(value);
  if (!parsed.success) {
    log.warn("template_status_ignored", { waba_id: wabaId });
    return { valid: false, rowsUpdated: 0, eventsRecorded: 0 };
  }
  // A WABA's numbers may be linked by accounts of several databases: each database on its own.
  let rowsUpdated = 0;
  let eventsRecorded = 0;
  for (const { db } of everyAccountDatabase(env)) {
    const done = await applyIn(env, db, wabaId, parsed.data, time);
    rowsUpdated += done.rowsUpdated;
    eventsRecorded += done.eventsRecorded;
  }
  return { valid: true, rowsUpdated, eventsRecorded };
}

/** {@link applyTemplateStatusUpdate} in one account database. */
async function applyIn(
  env: Env,
  db: Db,
  wabaId: string,
  update: z.infer<typeof TemplateStatusValue>,
  time: number | null,
): Promise<{ rowsUpdated: number; eventsRecorded: number }> {
  const templateId = String(update.message_template_id);
  const reason = update.reason && update.reason !== "NONE" ? update.reason : null;
  const [found, rows] = await Promise.all([
    numbersOfWaba(db, wabaId),
    templateRowsOf(db, wabaId, templateId),
  ]);
  // Only accounts this database serves: rows a move left behind (being deleted) or is copying
  // here are not told twice; an account that is moving throws AccountMoving, so Meta is answered
  // an error and sends the update again (docs/databases.md, Databases, Moving an account).
  const numbers: typeof found = [];
  for (const number of found) if ((await databaseFor(env, number.accountId)) === db) numbers.push(number);
  const now = Date.now();
  // Meta's time has whole seconds: a row stays when its status is of a later second.
  const statusAt = time === null ? now : time * 1000;
  const before = statusAt - (statusAt % 1000) + 1000;
  const sessionsOf = new Map<string, string[]>();
  for (const number of numbers)
    sessionsOf.set(number.accountId, [...(sessionsOf.get(number.accountId) ?? []), number.sessionId]);
  const events = [...sessionsOf].flatMap(([accountId, sessionIds]) => {
    const own = rows.filter((row) => row.accountId === accountId);
    const older = own.filter((row) => row.statusAt < before);
    if (own.length > 0 && older.length === 0) return [];
    if (own.length > 0 && older.every((row) => row.status === update.event && row.reason === reason))
      return [];
    const known = older[0];
    const template = {
      templateId,
      name: known?.name ?? update.message_template_name ?? "",
      language: known?.language ?? update.message_template_language ?? "",
      category: known?.category ?? null,
      status: update.event,
      components: known?.components ?? "[]",
      reason,
      syncedAt: now,
    };
    return [
      insertEventStatement({
        id: newEventId(),
        accountId,
        type: "template.status_changed",
        snapshot: JSON.stringify({ template, reason, sessionIds: [...sessionIds].sort() }),
        createdAt: now,
      }),
    ];
  });
  const results = await batchSql(db, [
    setTemplateStatusStatement(wabaId, templateId, {
      status: update.event,
      reason,
      at: now,
      statusAt,
      before,
    }),
    ...events,
  ]);
  await publishEvents(
    env,
    recordedIn(
      results,
      events.map((_, index) => index + 1),
    ),
  );
  return { rowsUpdated: results[0]?.meta.changes ?? 0, eventsRecorded: events.length };
}
