import { z } from "@hono/zod-openapi";
import { SCOPES } from "../../keys/scopes";
import { PageLinksSchema } from "../paging";

const SCOPE_LIST = SCOPES.map((s) => `\`${s}\``).join(", ");

const Scopes = z
  .array(z.enum(SCOPES))
  .min(1)
  .max(SCOPES.length)
  .refine((scopes) => new Set(scopes).size === scopes.length, "must not repeat a scope")
  .openapi({
    description: `What the key may do: ${SCOPE_LIST}. \`*\` is everything; \`<resource>:write\` also reads the resource; \`otp:send\` and \`otp:verify\` read one-time codes; \`messages:send\` only sends. Each operation of this reference names the scope it needs.`,
    example: ["messages:send", "otp:send"],
  });

const ExpiresAt = z.iso.datetime({ offset: true }).max(64).nullish().openapi({
  description:
    "When the key stops working (RFC 3339, in the future); after it the key is refused like a revoked one (401). Absent or null: it does not expire, unless the creating key expires, whose expiry it then gets.",
  example: "2027-01-01T00:00:00Z",
});

export const KeySchema = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    prefix: z
      .string()
      .openapi({ description: "The key's first characters, for recognising it.", example: "sk_AbCdEfGh" }),
    scopes: z.array(z.enum(SCOPES)).openapi({ example: ["messages:send"] }),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z
      .string()
      .nullable()
      .openapi({ description: "When the key last authenticated a request, to the minute." }),
    created_by: z.uuid().nullable().openapi({
      description:
        "The id of the key that created this one with `POST /v1/api-keys`; null for a key the admin API made (or one made before keys recorded their creator). `DELETE /v1/api-keys/{id}?cascade=true` and `DELETE /admin/keys/{id}` follow it.",
      example: "0f8fad5b-d9cb-469f-a165-70867728950e",
    }),
  })
  .openapi("ApiKey");

export const ApiKeyPlaintext = z
  .string()
  .openapi({ description: "The key in plaintext. Shown only here, once.", example: "sk_…" });

/** Body of `POST /v1/api-keys`. */
export const CreateKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).openapi({ example: "checkout backend" }),
  scopes: Scopes,
  expires_at: ExpiresAt,
});

/** Body of the admin API's key creation: every field optional, scopes `*` by default. */
export const AdminCreateKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: Scopes.optional(),
  expires_at: ExpiresAt,
});

export const CreatedKeySchema = z
  .object({ success: z.literal(true), data: z.object({ key: KeySchema, api_key: ApiKeyPlaintext }) })
  .openapi("CreatedApiKey");

export const KeyListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(KeySchema).openapi({ description: "The page, newest first." }),
    ...PageLinksSchema,
  })
  .openapi("ApiKeyList");

/** Query of `DELETE /v1/api-keys/{id}`. */
export const RevokeKeyQuery = z.object({
  cascade: z.enum(["true", "false"]).optional().openapi({
    description:
      "`true`: also revoke every key this key created, and the keys those created, down the whole tree (`created_by`); the answer is then 200 with the revoked ids. Default `false`: this key only, answered 204.",
    example: "true",
  }),
});

/** Query of `DELETE /admin/keys/{id}`: as {@link RevokeKeyQuery}, but cascading unless told not to. */
export const AdminRevokeKeyQuery = z.object({
  cascade: z.enum(["true", "false"]).optional().openapi({
    description:
      "Default `true`: also revoke every key this key created, and the keys those created, down the whole tree (`created_by`), answered 200 with the revoked ids. `false`: this key only, answered 204.",
    example: "false",
  }),
});

export const RevokedKeysSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      revoked: z.array(z.uuid()).openapi({
        description:
          "The ids of the keys this call revoked: the key named in the path first, then the keys under it, nearest first. Keys revoked before are not listed.",
        example: ["0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7"],
      }),
      disabled_webhook_endpoints: z.array(z.uuid()).openapi({
        description:
          'The ids of the webhook endpoints this call turned off because a revoked key created them or last pointed them elsewhere (their `disabled_reason` is now `key_revoked`). `PATCH {"enabled": true}` with a live key turns one back on.',
        example: ["9b2e4c1a-5f3d-4e8b-a6c7-1d2e3f4a5b6c"],
      }),
    }),
  })
  .openapi("RevokedApiKeys");
