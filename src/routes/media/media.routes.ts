import { createRoute, z } from "@hono/zod-openapi";
import { MEDIA_LINK_TTL_SECONDS } from "../../media/link";
import { MEDIA_RULES } from "../../media/rules";
import { problems, publicOperation } from "../openapi";

/** The stored media file's key: a uuid. A malformed one is answered 404, like an unknown one. */
export const MediaKeyParam = z.object({
  key: z
    .uuid()
    .max(36)
    .openapi({ param: { name: "key", in: "path" }, example: "5f0c6f2e-1f0b-4d7e-9a43-3f8f2b1e9c11" }),
});

/** The signed link's query; checked by the handler, so that a missing one is 403 like a wrong one. */
export const MediaLinkQuery = z.object({
  expires: z
    .string()
    .max(20)
    .optional()
    .openapi({
      param: { name: "expires", in: "query" },
      description: "When the link expires, in Unix seconds.",
      example: "1795000000",
    }),
  signature: z
    .string()
    .max(128)
    .optional()
    .openapi({
      param: { name: "signature", in: "query" },
      description: "Hex HMAC-SHA256 of the key and `expires` under `MEDIA_URL_SECRET`.",
      example: "3f1c0d5b9e7a4c2f8d6b1a0e9c7f5d3b2a1908f7e6d5c4b3a29180f7e6d5c4b3",
    }),
});

const mediaTypes = [...new Set(Object.values(MEDIA_RULES).flatMap((rule) => rule.contentTypes))];

export const get = createRoute({
  operationId: "getStoredMedia",
  ...publicOperation,
  tags: ["Gateway media"],
  method: "get",
  path: "/{key}",
  summary: "A message's stored media, through a signed link (for WAHA and Evolution API)",
  description:
    "What a real gateway fetches a media message's file from: the copy the service fetched from the caller's " +
    "`media_url` and stored, never the caller's URL itself. The link comes signed with the gateway's send " +
    `call and is valid for ${MEDIA_LINK_TTL_SECONDS / 60} minutes; the answer is the stored bytes with their stored content type. ` +
    "A missing, wrong or expired signature is 403 `media_link_invalid`; a file no longer stored, 404. " +
    "Exists while `CHATAPP_GATEWAY` is `waha` or `evolution`.",
  request: { params: MediaKeyParam, query: MediaLinkQuery },
  responses: {
    200: {
      description: "The stored file",
      content: Object.fromEntries(
        mediaTypes.map((type) => [type, { schema: { type: "string" as const, format: "binary" } }]),
      ),
    },
    ...problems("media_link_invalid", "not_found"),
  },
});
