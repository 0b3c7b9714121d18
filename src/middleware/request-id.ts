import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";

/** An incoming `X-Request-Id` is echoed only when it looks like an id (1–128 of `A-Za-z0-9._:-`). */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Sets `c.var.requestId` (echoed or a new uuid) and the `X-Request-Id` response header. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const id = incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", id);
  c.header("X-Request-Id", id);
  await next();
});
