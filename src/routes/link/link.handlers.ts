import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { qrPngDataUri } from "../../lib/qr-png";
import { formatNullableTimestamp, formatTimestamp } from "../../lib/time";
import { unwrap } from "../../sessions/result";
import { toPublicSession } from "../../sessions/session-record";
import { sessionStub } from "../../sessions/stub";
import { renderLinkPage } from "../../web/link/link-page";
import type * as routes from "./link.routes";

/** The token's grant (set by the link router's middleware) and its session's object. */
function granted(c: Context<AppEnv>) {
  const grant = c.var.linkGrant;
  if (!grant) throw new Error("link route reached without a link grant");
  return { grant, stub: sessionStub(c.env, grant.sessionId) };
}

/** The session's public view as `GET /link/{token}/session` shows it, and the link page renders it. */
async function publicView(c: Context<AppEnv>) {
  const { grant, stub } = granted(c);
  const snapshot = await stub.snapshot();
  // Deleted since the token was looked up.
  if (!snapshot.ok) throw new ApiError("link_not_found", "No such link.");
  const { session, qr } = snapshot.value;
  return {
    success: true as const,
    session: toPublicSession(session),
    qr_code: qr ? qrPngDataUri(qr.payload) : null,
    qr_expires_at: formatNullableTimestamp(qr?.expiresAt),
    return_url: grant.returnUrl,
    link_expires_at: formatTimestamp(grant.expiresAt),
  };
}

export const page: RouteHandler<typeof routes.page, AppEnv> = async (c) =>
  c.html(renderLinkPage(await publicView(c)), 200);

export const view: RouteHandler<typeof routes.view, AppEnv> = async (c) => c.json(await publicView(c), 200);

export const pairingCode: RouteHandler<typeof routes.pairingCode, AppEnv> = async (c) => {
  const { stub } = granted(c);
  const code = unwrap(await stub.pairingCode(c.req.valid("json").phone_number));
  return c.json({ success: true as const, pairing_code: code }, 200);
};

export const reconnect: RouteHandler<typeof routes.reconnect, AppEnv> = async (c) => {
  const { stub } = granted(c);
  const { session, qr } = unwrap(await stub.reconnect());
  return c.json(
    {
      success: true as const,
      session: toPublicSession(session),
      ...(qr ? { qr_code: qrPngDataUri(qr) } : {}),
    },
    200,
  );
};
