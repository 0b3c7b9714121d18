import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { findSession, listSessions } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { qrPngDataUri } from "../../lib/qr-png";
import { unwrap } from "../../sessions/result";
import { toSessionRecord } from "../../sessions/session-record";
import { sessionStub } from "../../sessions/stub";
import type * as routes from "./sessions.routes";

/** The session object of a session the caller owns; 404 for unknown and for others' sessions. */
async function ownedSession(c: Context<AppEnv>, id: string) {
  const row = await findSession(c.var.db, c.var.principal.accountId, id);
  if (!row) throw new ApiError("not_found", "No such session.");
  return sessionStub(c.env, id);
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const rows = await listSessions(c.var.db, c.var.principal.accountId);
  return c.json({ success: true as const, sessions: rows.map(toSessionRecord) }, 200);
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const id = crypto.randomUUID();
  const { session, qr } = unwrap(
    await sessionStub(c.env, id).create({
      id,
      accountId: c.var.principal.accountId,
      origin: new URL(c.req.url).origin,
    }),
  );
  const { reason: _reason, ...withoutReason } = session;
  return c.json({ success: true as const, session: withoutReason, qr_code: qrPngDataUri(qr) }, 201);
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findSession(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "No such session.");
  return c.json({ success: true as const, session: toSessionRecord(row) }, 200);
};

export const qrCode: RouteHandler<typeof routes.qrCode, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const payload = unwrap(await stub.qrPayload());
  return c.json({ success: true as const, qr_code: qrPngDataUri(payload) }, 200);
};

export const disconnect: RouteHandler<typeof routes.disconnect, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const session = unwrap(await stub.disconnect());
  return c.json({ success: true as const, session }, 200);
};

export const reconnect: RouteHandler<typeof routes.reconnect, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const { session, qr } = unwrap(await stub.reconnect());
  return c.json({ success: true as const, session, ...(qr ? { qr_code: qrPngDataUri(qr) } : {}) }, 200);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  unwrap(await stub.destroy());
  return c.json({ success: true as const, message: "Session deleted." }, 200);
};

export const pairingCode: RouteHandler<typeof routes.pairingCode, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const code = unwrap(await stub.pairingCode(c.req.valid("json").phone_number));
  return c.json({ success: true as const, pairing_code: code }, 200);
};

export const gatewayHealth: RouteHandler<typeof routes.gatewayHealth, AppEnv> = async (c) => {
  const stub = await ownedSession(c, c.req.valid("param").id);
  const health = unwrap(await stub.gatewayHealth());
  return c.json({ success: true as const, health }, 200);
};
