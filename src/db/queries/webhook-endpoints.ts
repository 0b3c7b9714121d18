import { and, desc, eq, or, sql } from "drizzle-orm";
import { batchSql, type Db } from "../client";
import { webhookEndpoints } from "../schema";
import { endpointFailingSince, failEndpointDeliveries } from "./webhook-deliveries";

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

/** The settings of an endpoint that its owner writes. */
export interface WebhookEndpointFields {
  /** Already checked against the URL rule by the caller. */
  url: string;
  description: string | null;
  /** Event type names; null for every type. */
  events: string[] | null;
  enabled: boolean;
}

const owned = (accountId: string, id: string) =>
  and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.accountId, accountId));

/** A signing secret as stored: sealed (src/webhooks/secret.ts), with the prefix shown of it. */
export interface StoredSecret {
  sealed: string;
  /** `secret_prefix`: the secret's first characters, in clear. */
  prefix: string;
}

/**
 * Inserts endpoint `id` (a fresh uuid) for the account at `now` (epoch ms) with signing secret
 * `secret`, unless the account already has `maxPerAccount` endpoints. The count and the insert
 * are one statement, so concurrent creates cannot pass the limit together. `createdBy` is the id
 * of the API key that creates it, recorded as its `created_by` and `url_set_by`. Its `number`
 * (the key of its deliveries) is one past the highest an endpoint or a delivery holds, so the
 * number of an endpoint deleted while history of it remains is not given again.
 *
 * @returns the new row, or null when the account is at its limit.
 */
export async function insertWebhookEndpoint(
  db: Db,
  accountId: string,
  id: string,
  fields: WebhookEndpointFields,
  secret: StoredSecret,
  maxPerAccount: number,
  now: number,
  createdBy: string,
): Promise<WebhookEndpointRow | null> {
  const row: Omit<WebhookEndpointRow, "number"> = {
    id,
    accountId,
    url: fields.url,
    description: fields.description,
    events: fields.events,
    enabled: fields.enabled,
    disabledReason: null,
    secret: secret.sealed,
    secretPrefix: secret.prefix,
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
    createdBy,
    urlSetBy: createdBy,
  };
  const [inserted] = await db.all<{ number: number }>(sql`INSERT INTO webhook_endpoints
      (id, account_id, url, description, events, enabled, disabled_reason, secret, secret_prefix,
       previous_secret, previous_secret_expires_at, created_at, updated_at, created_by, url_set_by, number)
    SELECT ${row.id}, ${accountId}, ${row.url}, ${row.description},
      ${row.events === null ? null : JSON.stringify(row.events)}, ${row.enabled ? 1 : 0}, NULL, ${secret.sealed},
      ${secret.prefix}, NULL, NULL, ${now}, ${now}, ${createdBy}, ${createdBy},
      1 + max(coalesce((SELECT max(number) FROM webhook_endpoints), 0),
        coalesce((SELECT max(endpoint_number) FROM webhook_deliveries), 0))
    WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ${accountId}) < ${maxPerAccount}
    RETURNING number`);
  return inserted ? { ...row, number: inserted.number } : null;
}

/** The account's endpoint with this uuid, or null (also for another account's). */
export async function findWebhookEndpoint(
  db: Db,
  accountId: string,
  id: string,
): Promise<WebhookEndpointRow | null> {
  const [row] = await db.select().from(webhookEndpoints).where(owned(accountId, id)).limit(1);
  return row ?? null;
}

/** Every endpoint of the account, newest first (`created_at`, then `id`, descending). */
export function listWebhookEndpoints(db: Db, accountId: string): Promise<WebhookEndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.accountId, accountId))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
}

/**
 * Applies `changes` to the account's endpoint and moves `updated_at` to `now` (epoch ms), or to
 * 1 ms past its stored value should the clock not have passed it. Fields left undefined keep
 * their value; `events: null` means every type, `description: null` clears it. Turning the
 * endpoint on (`enabled: true`) also clears `disabled_reason`. With `urlSetBy` (the id of the API
 * key that points the endpoint at a new `url`) it becomes the endpoint's `url_set_by`.
 *
 * @returns the updated row, or null when the account has no such endpoint.
 */
export async function updateWebhookEndpoint(
  db: Db,
  accountId: string,
  id: string,
  changes: Partial<WebhookEndpointFields> & { urlSetBy?: string },
  now: number,
): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      url: changes.url,
      urlSetBy: changes.urlSetBy,
      description: changes.description,
      events: changes.events,
      enabled: changes.enabled,
      disabledReason: changes.enabled === true ? null : undefined,
      updatedAt: sql`max(${now}, ${webhookEndpoints.updatedAt} + 1)`,
    })
    .where(owned(accountId, id))
    .returning();
  return row ?? null;
}

/**
 * Replaces the account's endpoint's signing secret with `secret`. The old one becomes
 * `previous_secret` until `previousExpiresAt` (epoch ms), so that receivers can switch over while
 * both sign; with `previousExpiresAt` null it is dropped at once. A secret kept from an earlier
 * rotation is replaced (one previous secret at most). `updated_at` moves as in
 * {@link updateWebhookEndpoint}. One statement: two rotations cannot interleave. The old secret
 * moves as it is stored (sealed to the same endpoint, or still in clear).
 *
 * @returns the updated row, or null when the account has no such endpoint.
 */
export async function rotateWebhookSecret(
  db: Db,
  accountId: string,
  id: string,
  secret: StoredSecret,
  previousExpiresAt: number | null,
  now: number,
): Promise<WebhookEndpointRow | null> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      secret: secret.sealed,
      secretPrefix: secret.prefix,
      // SQLite evaluates every SET expression against the row as it was: this is the old secret.
      previousSecret: previousExpiresAt === null ? null : sql`${webhookEndpoints.secret}`,
      previousSecretExpiresAt: previousExpiresAt,
      updatedAt: sql`max(${now}, ${webhookEndpoints.updatedAt} + 1)`,
    })
    .where(owned(accountId, id))
    .returning();
  return row ?? null;
}

/**
 * Up to `limit` endpoints, of every account, whose secret or previous secret is still in clear
 * (`whsec_…`, rows made before secrets were sealed): their ids and stored secrets.
 */
export function listClearSecretEndpoints(
  db: Db,
  limit: number,
): Promise<Pick<WebhookEndpointRow, "id" | "secret" | "previousSecret">[]> {
  const clear = (column: typeof webhookEndpoints.secret | typeof webhookEndpoints.previousSecret) =>
    sql`substr(${column}, 1, 6) = 'whsec_'`;
  return db
    .select({
      id: webhookEndpoints.id,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
    })
    .from(webhookEndpoints)
    .where(or(clear(webhookEndpoints.secret), clear(webhookEndpoints.previousSecret)))
    .limit(limit);
}

/**
 * Stores endpoint `id`'s secrets as `after` if they are still `before` (a compare-and-set: a
 * rotation since they were read wins). `updated_at` stays: the endpoint did not change.
 *
 * @returns whether they were stored.
 */
export async function replaceEndpointSecrets(
  db: Db,
  id: string,
  before: Pick<WebhookEndpointRow, "secret" | "previousSecret">,
  after: Pick<WebhookEndpointRow, "secret" | "previousSecret">,
): Promise<boolean> {
  const result = await db.run(sql`UPDATE webhook_endpoints
    SET secret = ${after.secret}, previous_secret = ${after.previousSecret}
    WHERE id = ${id} AND secret = ${before.secret} AND previous_secret IS ${before.previousSecret}`);
  return result.meta.changes > 0;
}

/**
 * Deletes the account's endpoint for good, and fails its `pending` deliveries at `now` (epoch ms),
 * which can no longer be attempted; its delivery history stays until the hourly purge. Returns
 * false when the account has no such endpoint.
 */
export async function deleteWebhookEndpoint(
  db: Db,
  accountId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const [, deleted] = await batchSql(db, [
    sql`${failEndpointDeliveries(id, now)}
      AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId})`,
    sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId}`,
  ]);
  return (deleted?.meta.changes ?? 0) > 0;
}

/**
 * Turns the enabled endpoint `endpointId` off with `disabled_reason` `reason` at `now` (epoch ms);
 * `PATCH {enabled: true}` turns it back on. Returns false when it was off already or is gone.
 */
export async function disableEndpoint(
  db: Db,
  endpointId: string,
  reason: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .update(webhookEndpoints)
    .set({
      enabled: false,
      disabledReason: reason,
      updatedAt: sql`max(${now}, ${webhookEndpoints.updatedAt} + 1)`,
    })
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.enabled, true)));
  return result.meta.changes > 0;
}

/**
 * Turns the enabled endpoint `endpointId` off with `disabled_reason` `reason` when it has been
 * failing for `windowMs` up to `now` (epoch ms): no delivery of it succeeded in that window, and
 * a delivery made after its latest success (or ever, without one) that is `pending` or `failed`
 * is at least `windowMs` old. One statement, so it decides on one view of the table.
 *
 * @returns whether the endpoint was turned off.
 */
export async function disableEndpointIfFailing(
  db: Db,
  endpointId: string,
  reason: string,
  windowMs: number,
  now: number,
): Promise<boolean> {
  const result = await db.run(sql`UPDATE webhook_endpoints
    SET enabled = 0, disabled_reason = ${reason}, updated_at = max(${now}, updated_at + 1)
    WHERE id = ${endpointId} AND enabled = 1 AND ${endpointFailingSince(endpointId, now - windowMs)}`);
  return result.meta.changes > 0;
}
