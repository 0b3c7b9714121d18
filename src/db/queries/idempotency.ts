import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../client";
import { idempotencyKeys } from "../schema";
import { type Purge, type PurgeBudget, purgeBefore } from "./purge";

/**
 * Stored responses are kept (and keys reserved) for 24 hours (docs/messages.md, Sending messages), as
 * Stripe does (https://docs.stripe.com/api/idempotent_requests).
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/**
 * A key held `in_progress` longer than this belongs to a request that stopped before it stored
 * its answer (a Worker cannot run a request that long). What it did first is unknown, so a retry
 * does not run it again: {@link settleAbandonedKey} gives the key an answer instead.
 */
export const IN_PROGRESS_TIMEOUT_MS = 120_000;

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Reserves `key` for a request, atomically: inserts an `in_progress` row unless a live one
 * exists (an expired row is replaced; one stuck `in_progress` is not, see
 * {@link IN_PROGRESS_TIMEOUT_MS}). Returns null when the key was free and is now ours, otherwise
 * the existing row.
 */
export async function reserveKey(
  db: Db,
  accountId: string,
  key: string,
  requestHash: string,
  now: number,
): Promise<IdempotencyRow | null> {
  const [inserted] = await db
    .insert(idempotencyKeys)
    .values({
      accountId,
      key,
      requestHash,
      status: "in_progress",
      createdAt: now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    })
    .onConflictDoUpdate({
      target: [idempotencyKeys.accountId, idempotencyKeys.key],
      set: {
        requestHash,
        status: "in_progress",
        responseStatus: null,
        responseBody: null,
        createdAt: now,
        expiresAt: now + IDEMPOTENCY_TTL_MS,
      },
      setWhere: lt(idempotencyKeys.expiresAt, now),
    })
    .returning({ key: idempotencyKeys.key });
  if (inserted) return null;
  return findKey(db, accountId, key);
}

async function findKey(db: Db, accountId: string, key: string): Promise<IdempotencyRow | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
  return row ?? null;
}

/**
 * Stores the first response of a request made with `key` (any status, 5xx included: see
 * src/middleware/idempotency.ts), to be replayed until the key expires.
 */
export async function completeKey(
  db: Db,
  accountId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: status, responseBody: body })
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
}

/**
 * Gives a key whose request stopped without storing an answer (`in_progress` since `createdAt`,
 * past {@link IN_PROGRESS_TIMEOUT_MS}) the answer `status`/`body`, unless that request has stored
 * its own meanwhile. Returns the row as it then stands (a late answer of the request itself still
 * replaces this one, through {@link completeKey}).
 */
export async function settleAbandonedKey(
  db: Db,
  accountId: string,
  key: string,
  createdAt: number,
  status: number,
  body: string,
): Promise<IdempotencyRow | null> {
  await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: status, responseBody: body })
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.key, key),
        eq(idempotencyKeys.status, "in_progress"),
        eq(idempotencyKeys.createdAt, createdAt),
      ),
    );
  return findKey(db, accountId, key);
}

/**
 * Deletes the keys expired before `now` (epoch ms), their stored answers with them, in bounded
 * chunks through `idempotency_keys_expires` (the hourly job `purge_idempotency_keys`).
 */
export function purgeExpiredIdempotencyKeys(db: Db, now: number, budget?: PurgeBudget): Promise<Purge> {
  return purgeBefore(db, idempotencyKeys, idempotencyKeys.expiresAt, now, budget);
}
