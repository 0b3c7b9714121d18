import { createRoute } from "@hono/zod-openapi";
import { adminIdempotency } from "../../middleware/idempotency";
import {
  AdminCreateKeyBody,
  AdminRevokeKeyQuery,
  CreatedKeySchema,
  KeyListSchema,
  RevokedKeysSchema,
} from "../api-keys/api-keys.schemas";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems } from "../openapi";
import { PageQuery } from "../paging";
import {
  AccountEnvelopeSchema,
  CreateAccountBody,
  CreatedAccountSchema,
  CreditBody,
  DatabaseListSchema,
  JobNameParam,
  JobRunSchema,
  MetricsSchema,
  MoveAccountBody,
  UpdateAccountBody,
} from "./admin.schemas";

const common = { tags: ["Admin"], security: [{ AdminToken: [] }] };
const adminProblems = problems("unauthenticated", "not_found", "validation_failed");

export const createAccount = createRoute({
  operationId: "createAccount",
  ...common,
  method: "post",
  path: "/accounts",
  summary: "Create an account and its first API key",
  description:
    "`balance` is the opening credit; `max_sessions` and `max_draft_recipients` set the account's limits (docs/security.md, " +
    "Account limits), and `message_retention_days` how long its final messages stay before they are " +
    "archived (docs/retention.md, Archives); their defaults when left out.",
  request: { body: jsonBody(CreateAccountBody) },
  responses: {
    201: json(CreatedAccountSchema, "The account and its API key (shown once)"),
    ...adminProblems,
  },
});

export const updateAccount = createRoute({
  operationId: "updateAccount",
  ...common,
  method: "patch",
  path: "/accounts/{id}",
  summary: "Change an account's limits and message retention",
  description:
    "`max_sessions` and `max_draft_recipients` (docs/security.md, Account limits), and `message_retention_days` " +
    "(docs/retention.md, Archives: the next run of the hourly job `archive_messages`, or `POST /admin/jobs/archive_messages`, " +
    "applies it); a field left out keeps its value. A limit below what the account uses now keeps what it has and " +
    "refuses more (409 `account_limit_reached`).",
  request: { params: IdParam, body: jsonBody(UpdateAccountBody) },
  responses: { 200: json(AccountEnvelopeSchema, "The account after the change"), ...adminProblems },
});

export const createKey = createRoute({
  operationId: "createApiKey",
  ...common,
  method: "post",
  path: "/accounts/{id}/keys",
  summary: "Issue another API key for an account",
  request: { params: IdParam, body: { ...jsonBody(AdminCreateKeyBody), required: false } },
  responses: { 201: json(CreatedKeySchema, "The key (shown once)"), ...adminProblems },
});

export const listKeys = createRoute({
  operationId: "listAccountApiKeys",
  ...common,
  method: "get",
  path: "/accounts/{id}/keys",
  summary: "List an account's API keys, newest first",
  description:
    "The account's live keys (expired ones included, revoked ones not) as `GET /v1/api-keys` shows them: scopes, prefix, `created_by`, when each was last used; never a secret. Cursor-paged like the message list. An unknown account is 404.",
  request: { params: IdParam, query: PageQuery },
  responses: { 200: json(KeyListSchema, "A page of the account's keys"), ...adminProblems },
});

export const revokeKey = createRoute({
  operationId: "revokeApiKey",
  ...common,
  method: "delete",
  path: "/keys/{id}",
  summary: "Revoke an API key and the keys it created (they stop working at once)",
  description:
    "Revokes the key and, unless `cascade=false`, every key it created (`created_by`), transitively, as `DELETE /v1/api-keys/{id}?cascade=true` does, whatever their scopes. " +
    "Each revoked key's footholds go with it: the account's webhook endpoints it created or last pointed elsewhere are turned off (`disabled_reason` `key_revoked`), the link tokens it minted are revoked (their pages and live route answer 410 `link_expired`), and the live sockets opened with those keys or tokens close (4401 `key revoked`, 4403 `link revoked`). " +
    "docs/security.md, Keys and scopes.",
  request: { params: IdParam, query: AdminRevokeKeyQuery },
  responses: {
    200: json(
      RevokedKeysSchema,
      "Revoked with the keys under it (the default): the ids revoked and turned off",
    ),
    204: { description: "Revoked, with `cascade=false`: this key only" },
    ...adminProblems,
  },
});

export const credit = createRoute({
  operationId: "creditAccount",
  ...common,
  method: "post",
  path: "/accounts/{id}/credits",
  summary: "Add credit to an account's balance",
  description:
    "Send an `Idempotency-Key` header to make retries safe: a retried credit with the same key is credited once, and the first response is replayed for 24 hours.",
  // Only the credit: a stored response of account or key creation would hold an API key in
  // clear, where only its hash is ever stored.
  middleware: [adminIdempotency] as const,
  request: {
    params: IdParam,
    headers: IdempotencyKeyHeader,
    body: jsonBody(CreditBody),
  },
  responses: {
    200: json(AccountEnvelopeSchema, "The account after the credit"),
    ...adminProblems,
    ...problems("idempotency_key_in_use", "idempotency_key_reused"),
  },
});

export const showAccount = createRoute({
  operationId: "getAccount",
  ...common,
  method: "get",
  path: "/accounts/{id}",
  summary: "Show an account",
  request: { params: IdParam },
  responses: { 200: json(AccountEnvelopeSchema, "The account"), ...adminProblems },
});

export const moveAccount = createRoute({
  operationId: "moveAccount",
  ...common,
  method: "post",
  path: "/accounts/{id}/move",
  summary: "Move an account to another account database",
  description:
    "Begins moving the account, with every row of it, to `database` (docs/databases.md, Databases, Moving an account): the " +
    "account is refused at once (503 `account_moving`, with `Retry-After`, to its API keys; its queued work " +
    "waits), for a hold while every isolate learns of the move, then while its rows are copied and counted on " +
    "both sides; then the directory switches it to `database`, it is served again, and its rows are deleted " +
    "from the old database. The answer is the account with its `move`; `GET /admin/accounts/{id}` follows it. " +
    "Posting the same move again while it is under way resumes it (a lost step); another database then is 409 " +
    "`account_move_in_progress`. A database the deployment does not list, whose migrations are not all " +
    "applied, or that already holds the account is 422 `validation_failed`.",
  request: { params: IdParam, body: jsonBody(MoveAccountBody) },
  responses: {
    202: json(AccountEnvelopeSchema, "The account, its move begun or resumed"),
    ...adminProblems,
    ...problems("account_move_in_progress"),
  },
});

export const metrics = createRoute({
  operationId: "getMetrics",
  ...common,
  method: "get",
  path: "/metrics",
  summary: "D1 statements and rows counted by the isolate that answers",
  description:
    "Counters since the answering isolate started, for benchmarks: every D1 statement the service ran (each " +
    "result D1 returned, whether of a batch or a single query), its round trips, and the rows D1 reports read " +
    "and written. Under `wrangler dev` the Worker, its queue consumers and its Durable Objects share one " +
    "isolate, so this covers them all; deployed, it covers only the isolate that answered. Reading it runs no " +
    "statement.",
  responses: { 200: json(MetricsSchema, "The counters"), ...problems("unauthenticated") },
});

export const listDatabases = createRoute({
  operationId: "listDatabases",
  ...common,
  method: "get",
  path: "/databases",
  summary: "The account databases, their accounts and sizes",
  description:
    "Every account database the deployment lists (wrangler.toml `DB_ACCOUNTS_<n>`), in order, with how many " +
    "accounts the directory places in it and its size as D1 reports it (docs/databases.md, Databases). A new account goes " +
    "to the one with the fewest accounts.",
  responses: { 200: json(DatabaseListSchema, "The account databases"), ...problems("unauthenticated") },
});

export const runJob = createRoute({
  operationId: "runJob",
  ...common,
  method: "post",
  path: "/jobs/{name}",
  summary: "Run one hourly job now",
  description:
    "Runs one of the hourly housekeeping jobs (docs/retention.md, Hourly jobs) once, now, as the cron " +
    "trigger does every hour: after changing a retention, or under `wrangler dev`, which runs no cron. Each job " +
    "is a sweep that the next run repeats, so running one again is safe. 404 `not_found` for an unknown name; " +
    "503 `service_unavailable` when the job fails (D1 or a queue refused it), with its error in `detail`.",
  request: { params: JobNameParam },
  responses: {
    200: json(JobRunSchema, "What the job did"),
    ...problems("unauthenticated", "not_found", "service_unavailable"),
  },
});
