import { createRoute } from "@hono/zod-openapi";
import { BucketQuery } from "../buckets";
import { IdParam, json, problems, requires } from "../openapi";
import { OtpStatsSchema } from "./otp-stats.schemas";

export const stats = createRoute({
  operationId: "getOtpStats",
  ...requires("otp:read"),
  tags: ["One-time codes"],
  method: "get",
  path: "/apps/{id}/otp-stats",
  summary:
    "An app's verification statistics per hour or day: sent, delivered, verified, conversion, time to verify",
  description:
    "After Twilio Verify's insights. An OTP counts in the UTC hour or day it was started, under its status now " +
    "(so a bucket's counts move as its OTPs are verified, fail or expire), once in total, once under its mode " +
    "and once under its channel. The range runs from `time_from` rounded down to `time_to` rounded up to the " +
    "granularity, at most 31 days by hour and 366 by day (422 `time_range_invalid`, also when `time_to` is not " +
    "after `time_from`).",
  request: { params: IdParam, query: BucketQuery },
  responses: {
    200: json(OtpStatsSchema, "Verification statistics per bucket"),
    ...problems("not_found", "validation_failed", "time_range_invalid"),
  },
});
