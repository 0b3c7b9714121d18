import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { gatewaySettingsOf, readConfig } from "../../config";
import { revokeLinkTokens } from "../../db/queries/link-tokens";
import { findSession, listSessions } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { capabilitiesOf } from "../../lib/gateway-kinds";
import { qrPngDataUri } from "../../lib/qr-png";
import { sealSecret } from "../../lib/sealed-secret";
import { formatTimestamp } from "../../lib/time";
import { LINK_EXPIRES_IN, linkUrl, mintLinkToken, storeLinkToken } from "../../links/tokens";
import { CREDENTIAL_HEADER, credentialHeader, type LiveCredential } from "../../sessions/live-credentials";
import { unwrap } from "../../sessions/result";
import { toSessionRecord } from "../../sessions/session-record";
import { sessionStub } from "../../sessions/stub";
import { pageLinks } from "../paging";
import type * as routes from "./sessions.routes";

/** The session object of a session the caller owns; 404 for unknown and for others' sessions. */
async function ownedSession(c: Context<AppEnv>, id: string) {
  const row = await findSession(c.var.db, c.var.principal.accountId, id);
  if (!row) throw new ApiError("not_found", "No such session.");
  return sessionStub(c.env, id);
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const page = { limit, cursor: cursor ?? null };
  const { rows, more } = await listSessions(c.var.db, c.var.principal.accountId, page);
  return c.json(
    {
      success: true as const,
      sessions: rows.map((row) => toSessionRecord(row, readConfig(c.env).CHATAPP_GATEWAY)),
      ...pageLinks(c, rows, { ...page, more }),
    },
    200,
  );
};

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const config = readConfig(c.env);
  const body = c.req.valid("json");
  const gateway = body.gateway ?? config.CHATAPP_GATEWAY;
  const settings = gatewaySettingsOf(config, gateway);
  if (!settings) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { gateway: [`not enabled here; enabled: ${config.CHATAPP_GATEWAYS.join(", ")}`] },
    });
  }
  const byCredentials = capabilitiesOf(gateway).linksByCredentials;
  if (byCredentials !== (body.cloud_api !== undefined)) {
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: {
        cloud_api: [byCredentials ? "required with gateway cloud_api" : "only with gateway cloud_api"],
      },
    });
  }
  const id = crypto.randomUUID();
  const cloudApi =
    "credentialsKey" in settings && body.cloud_api
      ? {
          phoneNumberId: body.cloud_api.phone_number_id,
          wabaId: body.cloud_api.waba_id,
          accessTokenSealed: await sealSecret(settings.credentialsKey, id, body.cloud_api.access_token),
        }
      : null;
  const { session, qr } = unwrap(
    await sessionStub(c.env, id).create({
      id,
      accountId: c.var.principal.accountId,
      gateway,
      origin: new URL(c.req.url).origin,
      cloudApi,
    }),
  );
  const { reason: _reason, ...withoutReason } = session;
  return c.json(
    { success: true as const, session: withoutReason, qr_code: qr ? qrPngDataUri(qr) : null },
    201,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findSession(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "No such session.");
  return c.json(
    { success: true as const, session: toSessionRecord(row, readConfig(c.env).CHATAPP_GATEWAY) },
    200,
  );
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

export const live: RouteHandler<typeof routes.live, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const grant = c.var.linkGrant;
  // A token reaches its own session only; another session is unknown to it, as to a key.
  const mine = grant
    ? grant.sessionId === id
    : (await findSession(c.var.db, c.var.principal.accountId, id)) !== null;
  if (!mine) throw new ApiError("not_found", "No such session.");
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError("upgrade_required", "This route is a WebSocket: send `Upgrade: websocket`.", {
      headers: { Upgrade: "websocket" },
    });
  }
  // The socket lives no longer than the key or token that opens it (docs/security.md, Live sockets).
  const credential: LiveCredential = grant
    ? { kind: "link", id: grant.tokenId, expiresAt: grant.expiresAt }
    : { kind: "key", id: c.var.principal.apiKeyId, expiresAt: c.var.principal.expiresAt };
  const upgraded = await sessionStub(c.env, id).fetch("https://session.internal/live", {
    headers: { Upgrade: "websocket", [CREDENTIAL_HEADER]: credentialHeader(credential) },
  });
  // Deleted between the check above and the object's answer.
  if (upgraded.status !== 101) throw new ApiError("not_found", "No such session.");
  return upgraded;
};

export const createLinkUrl: RouteHandler<typeof routes.createLinkUrl, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const accountId = c.var.principal.accountId;
  const owned = await findSession(c.var.db, accountId, id);
  if (!owned) throw new ApiError("not_found", "No such session.");
  const links = owned.gateway && capabilitiesOf(owned.gateway);
  if (links && !links.linksByQr && !links.linksByPairingCode) {
    throw new ApiError(
      "not_supported_by_gateway",
      "The session's gateway (cloud_api) links a business number by its ids: it has no link page.",
    );
  }
  const body = c.req.valid("json");
  const { row, token } = await mintLinkToken({
    accountId,
    sessionId: id,
    returnUrl: body.return_url ?? null,
    expiresInSeconds: body.expires_in ?? LINK_EXPIRES_IN.default,
    now: Date.now(),
    createdBy: c.var.principal.apiKeyId,
  });
  await storeLinkToken(c.env, c.var.db, row);
  const origin = readConfig(c.env).publicUrl ?? new URL(c.req.url).origin;
  return c.json(
    {
      success: true as const,
      url: linkUrl(origin, token),
      expires_at: formatTimestamp(row.expiresAt),
      return_url: row.returnUrl,
      created_at: formatTimestamp(row.createdAt),
    },
    201,
  );
};

export const revokeLinkUrls: RouteHandler<typeof routes.revokeLinkUrls, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const accountId = c.var.principal.accountId;
  if (!(await findSession(c.var.db, accountId, id))) throw new ApiError("not_found", "No such session.");
  await revokeLinkTokens(c.var.db, accountId, id, Date.now());
  await sessionStub(c.env, id).closeLinkWatchers();
  return c.body(null, 204);
};
