import type { RouteHandler } from "@hono/zod-openapi";
import type { Db } from "../../db/client";
import { type AppRow, findApp, insertApp, listApps, softDeleteApp, updateApp } from "../../db/queries/apps";
import { findSession } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { lengthAwarePage } from "../../lib/paginator";
import { defaultTemplate } from "../../lib/template";
import { formatNullableTimestamp, formatTimestamp } from "../../lib/time";
import type * as routes from "./apps.routes";
import { CODE_SIZE, EXPIRY_SECONDS } from "./apps.schemas";

/**
 * Row → API record (the `App` schema of openapi.json): `chatapp_session_id` only when the app has
 * one, `allowed_countries` and `otp_template` always (null: every country; no template), `deleted_at` always (null for live apps;
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
    expiry_seconds: row.expirySeconds,
    allowed_countries: row.allowedCountries,
    otp_template: row.otpTemplate,
    deleted_at: formatNullableTimestamp(row.deletedAt),
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

const noApp = () => new ApiError("not_found", "No such app.");

/** 422 unless `sessionId` is a session of the account: an app sends only through its account's sessions. */
async function assertOwnSession(db: Db, accountId: string, sessionId: string): Promise<void> {
  if (await findSession(db, accountId, sessionId)) return;
  throw new ApiError("validation_failed", "The request has invalid fields.", {
    fields: { chatapp_session_id: ["no such session in this account"] },
  });
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
  if (body.chatapp_session_id) await assertOwnSession(db, principal.accountId, body.chatapp_session_id);
  const row = await insertApp(
    db,
    principal.accountId,
    {
      name: body.name,
      senderId: body.sender_id,
      messageTemplate: body.message_template ?? defaultTemplate(body.name),
      codeSize: body.code_size ?? CODE_SIZE.default,
      expirySeconds: body.expiry_seconds ?? EXPIRY_SECONDS.default,
      chatappSessionId: body.chatapp_session_id ?? null,
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
  if (body.chatapp_session_id) await assertOwnSession(db, principal.accountId, body.chatapp_session_id);
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
      chatappSessionId: body.chatapp_session_id,
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
