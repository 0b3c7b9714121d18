import { z } from "@hono/zod-openapi";
import { ARCHIVE_KINDS } from "../../db/schema";
import { CursorParam, Limit, PageLinksSchema } from "../paging";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** An archive of messages as `GET /v1/account/archives` shows it. */
export const ArchiveSchema = z
  .object({
    id: z.string().openapi({ example: "arc_9f1c2d3e4b5a69788796a5b4c3d2e1f0" }),
    kind: z.enum(ARCHIVE_KINDS).openapi({
      description:
        "What each line is: `messages`, a Message as `GET /v1/chatapp/messages/{id}` showed it; `otps`, an OTP as " +
        "`GET /v1/otp/{id}` showed it, with its attempts; `campaign_recipients`, a recipient of campaign `campaign_id` " +
        "as `GET /v1/chatapp/campaigns/{id}/recipients` showed it.",
      example: "messages",
    }),
    campaign_id: z.string().nullable().openapi({
      description:
        "An archive of `campaign_recipients`: their campaign (each campaign's archived apart); else null.",
      example: null,
    }),
    day: z.iso
      .date()
      .openapi({ description: "The UTC day the archived records were made on.", example: "2026-08-30" }),
    count: z.int().openapi({ description: "Records in the archive: one NDJSON line each.", example: 9_412 }),
    message_count: z.int().openapi({
      description: "Deprecated: `count` for an archive of `messages`, else 0.",
      deprecated: true,
      example: 9_412,
    }),
    bytes: z.int().openapi({ description: "Size of the gzipped object, in bytes.", example: 1_204_733 }),
    created_at: timestamp.openapi({ description: "When the hourly job wrote it." }),
  })
  .openapi("Archive", {
    description:
      "Messages, OTPs or a campaign's recipients of one UTC day that passed the account's `message_retention_days` and left the database, stored " +
      "as gzipped NDJSON (one record per line, as the API showed it). A day may have several archives of each kind.",
  });

/** Query of `GET /v1/account/archives`. */
export const ArchiveListQuery = z.object({ limit: Limit, cursor: CursorParam.optional() });

export const ArchiveListSchema = z.object({
  success: z.literal(true),
  data: z.array(ArchiveSchema),
  ...PageLinksSchema,
});

export const ArchiveIdParam = z.object({
  id: z
    .string()
    .max(36)
    .regex(/^arc_[0-9a-f]{32}$/, "an archive id (arc_ and 32 hex digits)")
    .openapi({ param: { name: "id", in: "path" }, example: "arc_9f1c2d3e4b5a69788796a5b4c3d2e1f0" }),
});
