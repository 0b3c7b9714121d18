import type { RouteHandler } from "@hono/zod-openapi";
import { findSession } from "../../db/queries/sessions";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { checkNumbers } from "../../number-checks/check";
import { toNumberCheckRecord } from "../../presenters/number-check";
import type * as routes from "./number-checks.routes";

export const check: RouteHandler<typeof routes.check, AppEnv> = async (c) => {
  const { db, principal } = c.var;
  const { id } = c.req.valid("param");
  const session = await findSession(db, principal.accountId, id);
  if (!session) throw new ApiError("not_found", "No such session.");
  if (session.status !== "connected") {
    throw new ApiError(
      "session_not_connected",
      `The session is ${session.status}; numbers are checked through a connected session.`,
    );
  }
  const numbers = [...new Set(c.req.valid("json").numbers)];
  const checks = await checkNumbers(c.env, db, principal.accountId, [id], numbers, Date.now(), "throw");
  const data = numbers.flatMap((number) => {
    const found = checks.get(number);
    return found ? [toNumberCheckRecord(found)] : [];
  });
  return c.json({ success: true as const, data }, 200);
};
