import { createRoute, z } from "@hono/zod-openapi";
import { adminIdempotency } from "../../middleware/idempotency";
import { IdParam, json, jsonBody, problems } from "../openapi";
import {
  AccountEnvelopeSchema,
  CreateAccountBody,
  CreatedAccountSchema,
  CreatedKeySchema,
  CreateKeyBody,
  CreditBody,
} from "./admin.schemas";

const common = { tags: ["Admin"], security: [{ AdminToken: [] }] };
const adminProblems = problems("unauthenticated", "not_found", "validation_failed");
const retrySafe =
  "Send an `Idempotency-Key` header to make retries safe: the first response is replayed for 24 hours.";
/** The `Idempotency-Key` header of the POSTs below (their keys live apart from every account's). */
const idempotencyHeaders = z.object({ "idempotency-key": z.string().optional() });
const idempotencyProblems = problems("idempotency_key_in_use", "idempotency_key_reused");

export const createAccount = createRoute({
  ...common,
  method: "post",
  path: "/accounts",
  summary: "Create an account and its first API key",
  description: retrySafe,
  middleware: [adminIdempotency] as const,
  request: { headers: idempotencyHeaders, body: jsonBody(CreateAccountBody) },
  responses: {
    201: json(CreatedAccountSchema, "The account and its API key (shown once)"),
    ...adminProblems,
    ...idempotencyProblems,
  },
});

export const createKey = createRoute({
  ...common,
  method: "post",
  path: "/accounts/{id}/keys",
  summary: "Issue another API key for an account",
  description: retrySafe,
  middleware: [adminIdempotency] as const,
  request: {
    params: IdParam,
    headers: idempotencyHeaders,
    body: { ...jsonBody(CreateKeyBody), required: false },
  },
  responses: {
    201: json(CreatedKeySchema, "The key (shown once)"),
    ...adminProblems,
    ...idempotencyProblems,
  },
});

export const revokeKey = createRoute({
  ...common,
  method: "delete",
  path: "/keys/{id}",
  summary: "Revoke an API key (it stops working at once)",
  request: { params: IdParam },
  responses: { 204: { description: "Revoked" }, ...adminProblems },
});

export const credit = createRoute({
  ...common,
  method: "post",
  path: "/accounts/{id}/credits",
  summary: "Add credit to an account's balance",
  description: `A retried credit with the same \`Idempotency-Key\` is credited once. ${retrySafe}`,
  middleware: [adminIdempotency] as const,
  request: { params: IdParam, headers: idempotencyHeaders, body: jsonBody(CreditBody) },
  responses: {
    200: json(AccountEnvelopeSchema, "The account after the credit"),
    ...adminProblems,
    ...idempotencyProblems,
  },
});

export const showAccount = createRoute({
  ...common,
  method: "get",
  path: "/accounts/{id}",
  summary: "Show an account",
  request: { params: IdParam },
  responses: { 200: json(AccountEnvelopeSchema, "The account"), ...adminProblems },
});
