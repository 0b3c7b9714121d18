import { z } from "@hono/zod-openapi";
import { GRANULARITIES } from "../buckets";

const timestamp = z.string().openapi({ example: "2026-11-21T00:00:00.000000Z" });

const counts = {
  sent: z
    .int()
    .openapi({ description: "OTPs started in the bucket (a reverse OTP counts when it is created)." }),
  delivered: z.int().openapi({
    description: "Of them, OTPs one of whose messages got a `delivered` or `read` ack (send mode only).",
  }),
  verified: z.int(),
  failed: z.int().openapi({ description: "Failed after too many wrong codes." }),
  expired: z.int().openapi({ description: "Expired unverified (a pending OTP past `expires_at` included)." }),
};

export const OtpStatsBucketSchema = z
  .object({
    start: timestamp.openapi({ description: "Start of the bucket (UTC hour or day)." }),
    ...counts,
    conversion_rate: z.number().nullable().openapi({
      description: "`verified` / `sent`, 0–1 rounded to 4 decimals; null when nothing was sent.",
      example: 0.8571,
    }),
    median_seconds_to_verify: z.number().nullable().openapi({
      description:
        "Median time from an OTP's start to its verification, seconds (ms precision); null without verified OTPs.",
      example: 12.48,
    }),
    by_channel: z
      .array(
        z.object({
          session_id: z.uuid().nullable().openapi({
            description:
              "The session of the OTP's latest attempt (after a failover, the channel that carried it last), or the session a reverse OTP waits on.",
          }),
          ...counts,
        }),
      )
      .openapi({ description: "The bucket's counts by channel; they add up to the bucket's." }),
    by_mode: z
      .array(z.object({ mode: z.enum(["send", "reverse"]), ...counts }))
      .openapi({ description: "The bucket's counts by mode; they add up to the bucket's." }),
  })
  .openapi("OtpStatsBucket");

export const OtpStatsSchema = z.object({
  success: z.literal(true),
  data: z.object({
    app_id: z.uuid(),
    granularity: z.enum(GRANULARITIES),
    time_from: timestamp.openapi({ description: "The range covered: `time_from` rounded down." }),
    time_to: timestamp.openapi({ description: "The range covered (exclusive): `time_to` rounded up." }),
    buckets: z.array(OtpStatsBucketSchema).openapi({
      description: "Oldest first; a bucket without OTPs is left out.",
    }),
  }),
});
