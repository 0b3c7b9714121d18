import type { RouteHandler } from "@hono/zod-openapi";
import type { Db } from "../../db/client";
import { type AppRow, findApp, insertApp, listApps, softDeleteApp, updateApp } from "../../db/queries/apps";
import { findSession } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { fromMinor, toMinor } from "../../lib/money";
import { lengthAwarePage } from "../../lib/paginator";
import { defaultTemplate } from "../../lib/template";
import { formatNullableTimestamp, formatTimestamp } from "../../lib/time";
import { CODE_SIZE } from "../../otp/code";
import type * as routes from "./apps.routes";
import { EXPIRY_SECONDS, FAILOVER_AFTER_SECONDS } from "./apps.schemas";

/**
 * Row → API record (the `App` schema of openapi.json): `chatapp_session_id` only when the app has
 * one, `channels` always (`[]` for none), `allowed_countries` and `otp_template` always (null: every country; no template), `deleted_at` always (null for live apps;
 * the create handler drops it).
 */
function toAppRecord(row: AppRow) {
  return {
    id: row.id,
    account_id: row.accountId,
    name: row.name,
    message_template: row.messageTemplate,
    sender_id: row.senderId,
    code_size: row.codeSize,
    ...(row.chatappSessionId ? { chatapp_session_id: row.chatappSessionId } : {}),
    channels: row.channels ?? [],
    failover_after_seconds: row.failoverAfterSeconds,
    reverse_price: fromMinor(row.reversePrice),
    expiry_seconds: row.expirySeconds,
    allowed_countries: row.allowedCountries,
    otp_template: row.otpTemplate,
    deleted_at: formatNullableTimestamp(row.deletedAt),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

const noApp = () => new ApiError("not_found", "No such app.");

/**
 * The channel list a request sets (docs/otp.md, Channels and failover): `channels`, or
 * `chatapp_session_id` as a one-channel list, or both when the list starts with that session;
 * null clears them; undefined when the request sets neither. Every session must be the account's.
 * @throws ApiError `validation_failed` (422) naming the field: a session not in the account, or
 *   a `chatapp_session_id` that is not the first of `channels`.
 */
async function channelsOf(
  db: Db,
  accountId: string,
  body: { chatapp_session_id?: string | null; channels?: string[] | null },
): Promise<string[] | null | undefined> {
  const single = body.chatapp_session_id;
  const list = body.channels;
  if (list !== undefined && single !== undefined && (list?.[0] ?? null) !== single) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { chatapp_session_id: ["must be the first of channels when both are given"] },
    });
  }
  const chosen =
    list !== undefined ? list : single === undefined ? undefined : single === null ? null : [single];
  for (const [i, sessionId] of (chosen ?? []).entries()) {
    if (await findSession(db, accountId, sessionId)) continue;
    const field = list !== undefined ? `channels.${i}` : "chatapp_session_id";
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { [field]: ["no such session in this account"] },
    });
  }
  return chosen;
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const { page, per_page: perPage } = c.req.valid("query");
  const { rows, total } = await listApps(c.var.db, c.var.principal.accountId, {
    limit: perPage,
    offset: (page - 1) * perPage,
  });
  const url = new URL(c.req.url);
  const body = lengthAwarePage({
    items: rows.map(toAppRecord),
    total,
    page,
    perPage,
    path: `${url.origin}${url.pathname.replace(/\/+$/, "")}`,
    // A page size the client chose is kept in the links, so that following them keeps it.
    appends: url.searchParams.has("per_page") ? { per_page: String(perPage) } : {},
  });
  return c.json(body, 200);
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const { db, principal } = c.var;
  const channels = (await channelsOf(db, principal.accountId, body)) ?? null;
  const row = await insertApp(
    db,
    principal.accountId,
    {
      name: body.name,
      senderId: body.sender_id,
      messageTemplate: body.message_template ?? defaultTemplate(body.name),
      codeSize: body.code_size ?? CODE_SIZE.default,
      expirySeconds: body.expiry_seconds ?? EXPIRY_SECONDS.default,
      channels,
      failoverAfterSeconds: body.failover_after_seconds ?? FAILOVER_AFTER_SECONDS.default,
      reversePrice: toMinor(body.reverse_price ?? 0),
      allowedCountries: body.allowed_countries ?? null,
      otpTemplate: body.otp_template ?? null,
    },
    Date.now(),
  );
  const { deleted_at: _deletedAt, ...record } = toAppRecord(row);
  return c.json({ data: record }, 201);
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findApp(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw noApp();
  return c.json({ data: toAppRecord(row) }, 200);
};

/**
 * PUT and PATCH alike (`PUT` and `PATCH /v1/apps/{id}` in openapi.json: "PUT and PATCH behave
 * alike"; any subset of fields).
 */
export const update: RouteHandler<typeof routes.update, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const body = c.req.valid("json");
  const { db, principal } = c.var;
  // Not found comes before a field error about the session.
  if (!(await findApp(db, principal.accountId, id))) throw noApp();
  const channels = await channelsOf(db, principal.accountId, body);
  const row = await updateApp(
    db,
    principal.accountId,
    id,
    {
      name: body.name,
      senderId: body.sender_id,
      messageTemplate: body.message_template,
      codeSize: body.code_size,
      expirySeconds: body.expiry_seconds,
      channels,
      failoverAfterSeconds: body.failover_after_seconds,
      reversePrice: body.reverse_price === undefined ? undefined : toMinor(body.reverse_price),
      allowedCountries: body.allowed_countries,
      otpTemplate: body.otp_template,
    },
    Date.now(),
  );
  if (!row) throw noApp();
  return c.json({ data: toAppRecord(row) }, 200);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  if (!(await softDeleteApp(c.var.db, c.var.principal.accountId, c.req.valid("param").id, Date.now())))
    throw noApp();
  return c.body(null, 204);
};
