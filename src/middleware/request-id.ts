import type { Context } from "hono";
import { requestId as honoRequestId } from "hono/request-id";

/** An incoming `X-Request-Id` is echoed only when it looks like an id: 1–128 of `A-Za-z0-9._:-`. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The incoming `X-Request-Id` when it is {@link WELL_FORMED}, otherwise a new random (v4) uuid. */
function echoOrNew(c: Context): string {
  const incoming = c.req.header("x-request-id");
  return incoming && WELL_FORMED.test(incoming) ? incoming : crypto.randomUUID();
}

/**
 * Hono's request-id middleware: sets `c.var.requestId` and the `X-Request-Id` response header,
 * on errors too (the problem's `request_id` reads the same variable). Hono echoes an incoming id
 * of `[A-Za-z0-9_=-]` up to `limitLength`; ours must allow `.` and `:` (trace and vendor ids use
 * them) and not `=`, so `limitLength: 0` turns Hono's own check off and every id comes from
 * {@link echoOrNew}.
 */
export const requestId = honoRequestId({ limitLength: 0, generator: echoOrNew });
