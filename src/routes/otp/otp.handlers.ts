import type { RouteHandler } from "@hono/zod-openapi";
import type { Db } from "../../db/client";
import { missingRecord } from "../../db/queries/archives";
import { listAttempts } from "../../db/queries/otp-attempts";
import { findOtp, type OtpRow } from "../../db/queries/otps";
import type { AppEnv } from "../../env";
import { otpSecret } from "../../otp/code";
import { createReverseOtp } from "../../otp/reverse";
import { resendOtp, sendOtp } from "../../otp/send";
import { verifyOtp } from "../../otp/verify";
import { toOtpRecord, toReverseOtpRecord } from "../../presenters/otp";
import type * as routes from "./otp.routes";

/** The OTP as the API shows it, with its attempts read now. */
async function otpRecord(db: Db, otp: OtpRow) {
  return toOtpRecord({ ...otp, attempts: await listAttempts(db, otp.id) });
}

export const send: RouteHandler<typeof routes.send, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const input = { accountId: c.var.principal.accountId, appId: c.req.valid("param").id };
  if (body.mode === "reverse") {
    const created = await createReverseOtp(c.env, c.var.db, { ...input, toNumber: body.to });
    return c.json({ success: true as const, data: toReverseOtpRecord(created) }, 201);
  }
  const otp = await sendOtp(c.env, c.var.db, { ...input, toNumber: body.to });
  return c.json({ success: true as const, data: await otpRecord(c.var.db, otp) }, 201);
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  // Not needed to read an OTP, but a missing secret is reported on every OTP endpoint alike.
  otpSecret(c.env);
  const { accountId } = c.var.principal;
  const { id } = c.req.valid("param");
  const otp = await findOtp(c.var.db, accountId, id);
  if (!otp) throw await missingRecord(c.var.db, accountId, "otps", id);
  return c.json({ success: true as const, data: await otpRecord(c.var.db, otp) }, 200);
};

export const verify: RouteHandler<typeof routes.verify, AppEnv> = async (c) => {
  const otp = await verifyOtp(c.env, c.var.db, {
    accountId: c.var.principal.accountId,
    otpId: c.req.valid("param").id,
    code: c.req.valid("json").code,
  });
  return c.json({ success: true as const, data: await otpRecord(c.var.db, otp) }, 200);
};

export const resend: RouteHandler<typeof routes.resend, AppEnv> = async (c) => {
  const otp = await resendOtp(c.env, c.var.db, {
    accountId: c.var.principal.accountId,
    otpId: c.req.valid("param").id,
  });
  return c.json({ success: true as const, data: await otpRecord(c.var.db, otp) }, 200);
};
