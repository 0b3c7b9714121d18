import { createRoute } from "@hono/zod-openapi";
import { json, problems, requires } from "../openapi";
import { ArchiveIdParam, ArchiveListQuery, ArchiveListSchema } from "./archives.schemas";

const common = { tags: ["Account"] };

export const list = createRoute({
  operationId: "listArchives",
  ...requires("account:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's message archives, newest first",
  description:
    "Every hour, final messages (sent, delivered, read, failed, or incoming) older than the account's " +
    "`message_retention_days` (`GET /v1/account`) leave the database for an archive: gzipped NDJSON per UTC day. " +
    "Messages still queued or scheduled, waiting on an unknown outcome, whose media is still kept, carrying a one-time " +
    "code, or of a campaign still running are never archived. Cursor-paged like the message list.",
  request: { query: ArchiveListQuery },
  responses: {
    200: json(ArchiveListSchema, "A page of archives"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const download = createRoute({
  operationId: "getArchive",
  ...requires("account:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Download an archive's messages as NDJSON",
  description:
    "One Message per line (`application/x-ndjson`). Sent gzip-encoded (`Content-Encoding: gzip`) to a client that " +
    "accepts gzip, decoded for one that does not; with `Accept: application/gzip`, the gzipped file itself, as an attachment.",
  request: { params: ArchiveIdParam },
  responses: {
    200: {
      description: "The archive's messages",
      content: {
        "application/x-ndjson": { schema: { type: "string" } },
        "application/gzip": { schema: { type: "string", format: "binary" } },
      },
    },
    ...problems("unauthenticated", "not_found"),
  },
});
