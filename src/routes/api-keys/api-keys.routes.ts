import { createRoute } from "@hono/zod-openapi";
import { IdParam, json, jsonBody, problems, requires } from "../openapi";
import { PageQuery } from "../paging";
import {
  CreatedKeySchema,
  CreateKeyBody,
  KeyListSchema,
  RevokedKeysSchema,
  RevokeKeyQuery,
} from "./api-keys.schemas";

const common = { tags: ["API keys"] };

export const list = createRoute({
  operationId: "listApiKeys",
  ...requires("keys:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's API keys, newest first",
  description:
    "Live keys (expired ones included, revoked ones not), with their scopes, prefix and when each was last used; never a secret. Cursor-paged like the message list.",
  request: { query: PageQuery },
  responses: { 200: json(KeyListSchema, "A page of keys"), ...problems("validation_failed") },
});

export const create = createRoute({
  operationId: "createOwnApiKey",
  ...requires("keys:write"),
  ...common,
  method: "post",
  path: "/",
  summary: "Create an API key with some scopes",
  description:
    "The key's secret is in this response only. A key creates keys only within its own scopes, and none that outlives it: asking for more is 403 `insufficient_scope`, naming what.",
  request: { body: jsonBody(CreateKeyBody) },
  responses: {
    201: json(CreatedKeySchema, "The key (its secret shown once)"),
    ...problems("insufficient_scope", "validation_failed"),
  },
});

export const remove = createRoute({
  operationId: "deleteApiKey",
  ...requires("keys:write"),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Revoke an API key, and with cascade the keys it created",
  description:
    "The key stops working at once (401 `unauthenticated` from then on), the calling key included. " +
    "A key revokes only keys within its own scopes, as it creates only those: revoking a key that holds a scope the calling key lacks is 403 `insufficient_scope`, and nothing is revoked. " +
    "With `cascade=true` the keys it created (`created_by`) go too, transitively, and the answer lists every id revoked; every one of them must be within the calling key's scopes. " +
    "Each revoked key's footholds go with it: webhook endpoints it created or last pointed elsewhere are turned off (`disabled_reason` `key_revoked`), link URLs it made are revoked (410 `link_expired`), and live sockets opened with those keys or link URLs close (4401, 4403). docs/security.md, Keys and scopes.",
  request: { params: IdParam, query: RevokeKeyQuery },
  responses: {
    200: json(RevokedKeysSchema, "Revoked with `cascade=true`: the ids revoked"),
    204: { description: "Revoked (without `cascade`)" },
    ...problems("insufficient_scope", "not_found", "validation_failed"),
  },
});
