import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../client";
import { apps, type OtpTemplate } from "../schema";

export type AppRow = typeof apps.$inferSelect;

/** The writable settings of an app (times in epoch ms are set by the query functions). */
export interface AppFields {
  name: string;
  senderId: string;
  messageTemplate: string;
  codeSize: number;
  /** Seconds an OTP stays valid. */
  expirySeconds: number;
  /** Session ids codes try in order (1–5), or null for none; the first is `chatapp_session_id`. */
  channels: string[] | null;
  /** Seconds without a `delivered` ack before the next channel (5–300). */
  failoverAfterSeconds: number;
  /** Minor units charged per verified reverse OTP. */
  reversePrice: number;
  /** Upper-case ISO 3166-1 alpha-2 codes the app may send codes to; null for every country. */
  allowedCountries: string[] | null;
  /** The authentication template a Cloud API session sends codes with; null for none. */
  otpTemplate: OtpTemplate | null;
}

// A soft-deleted app (`DELETE /v1/apps/{id}` in openapi.json sets `deleted_at`, null for live
// apps) is invisible to every query below.
const live = (accountId: string) => and(eq(apps.accountId, accountId), isNull(apps.deletedAt));

/** Inserts a new app for the account at `now` (epoch ms); returns its row. */
export async function insertApp(db: Db, accountId: string, fields: AppFields, now: number): Promise<AppRow> {
  const row: AppRow = {
    id: crypto.randomUUID(),
    accountId,
    name: fields.name,
    senderId: fields.senderId,
    messageTemplate: fields.messageTemplate,
    codeSize: fields.codeSize,
    expirySeconds: fields.expirySeconds,
    chatappSessionId: fields.channels?.[0] ?? null,
    channels: fields.channels,
    failoverAfterSeconds: fields.failoverAfterSeconds,
    reversePrice: fields.reversePrice,
    allowedCountries: fields.allowedCountries,
    otpTemplate: fields.otpTemplate,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await db.insert(apps).values(row);
  return row;
}

/** The account's live app with this uuid, or null (also for a deleted app or another account's). */
export async function findApp(db: Db, accountId: string, id: string): Promise<AppRow | null> {
  const [row] = await db
    .select()
    .from(apps)
    .where(and(eq(apps.id, id), live(accountId)))
    .limit(1);
  return row ?? null;
}

/**
 * One page of the account's live apps, newest first (`created_at`, then `id`, descending), and
 * the number of live apps in all. Both are read in one D1 batch, so they agree with each other.
 */
export async function listApps(
  db: Db,
  accountId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: AppRow[]; total: number }> {
  const [rows, [counted]] = await db.batch([
    db
      .select()
      .from(apps)
      .where(live(accountId))
      .orderBy(desc(apps.createdAt), desc(apps.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(apps).where(live(accountId)),
  ]);
  return { rows, total: counted?.total ?? 0 };
}

/**
 * Applies `changes` to the account's live app and sets `updated_at` to `now` (epoch ms), even when
 * `changes` is empty (`PATCH /v1/apps/{id}` in openapi.json: "`updated_at` always changes");
 * should the clock not have passed the stored value, to 1 ms after it, so that it always moves.
 * Fields left undefined keep their value; `channels: null` clears the sessions (and `chatapp_session_id`, always its first) and
 * `allowedCountries: null` the country rule, `otpTemplate: null` the template. Returns the updated row, or null when there is no
 * such live app.
 */
export async function updateApp(
  db: Db,
  accountId: string,
  id: string,
  changes: Partial<AppFields>,
  now: number,
): Promise<AppRow | null> {
  const [row] = await db
    .update(apps)
    .set({
      name: changes.name,
      senderId: changes.senderId,
      messageTemplate: changes.messageTemplate,
      codeSize: changes.codeSize,
      expirySeconds: changes.expirySeconds,
      chatappSessionId: changes.channels === undefined ? undefined : (changes.channels?.[0] ?? null),
      channels: changes.channels,
      failoverAfterSeconds: changes.failoverAfterSeconds,
      reversePrice: changes.reversePrice,
      allowedCountries: changes.allowedCountries,
      otpTemplate: changes.otpTemplate,
      updatedAt: sql`max(${now}, ${apps.updatedAt} + 1)`,
    })
    .where(and(eq(apps.id, id), live(accountId)))
    .returning();
  return row ?? null;
}

/**
 * Soft-deletes the account's live app: sets `deleted_at` (and `updated_at`, as Laravel's
 * `SoftDeletes` does) to `now` (epoch ms). Returns false when there is no such live app.
 */
export async function softDeleteApp(db: Db, accountId: string, id: string, now: number): Promise<boolean> {
  const deleted = await db
    .update(apps)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(eq(apps.id, id), live(accountId)))
    .returning({ id: apps.id });
  return deleted.length > 0;
}
