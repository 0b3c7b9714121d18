import { createRoute } from "@hono/zod-openapi";
import { erasureRequestKey } from "../../erasures/address";
import { keyedIdempotency } from "../../middleware/idempotency";
import { IdempotencyKeyHeader, json, jsonBody, problems, requires } from "../openapi";
import { PageQuery } from "../paging";
import {
  CreateErasureBody,
  ErasureEnvelopeSchema,
  ErasureIdParam,
  ErasureListSchema,
} from "./erasures.schemas";

const common = { tags: ["Erasures"] };

export const create = createRoute({
  operationId: "createErasure",
  ...requires("erasures:write", keyedIdempotency(erasureRequestKey)),
  ...common,
  method: "post",
  path: "/",
  summary: "Erase everything the account holds about a contact",
  description:
    "GDPR Art. 17 (docs/contacts.md, Erasure). Every address the account's contacts link to the one given (their number and user ids) " +
    "is erased with it: message text, captions, media and template variables are deleted; the addresses are replaced by a keyed " +
    "hash in messages, one-time codes and campaign recipients; the contacts (and their customer service window) are deleted; " +
    "events and webhook deliveries that name them are purged. An opt-out stays, as the hash, so campaigns still skip the contact. " +
    "Money does not change: costs, the ledger and usage stay as they are. Answers 201 with the erasure, `completed` unless " +
    "something still waits (a message not yet sent), then `pending` until the hourly job erases it. A contact the account " +
    "never met, or erased before, gives a `completed` erasure with zero counts. Send an `Idempotency-Key` header to make retries safe.",
  request: { headers: IdempotencyKeyHeader, body: jsonBody(CreateErasureBody) },
  responses: {
    201: json(ErasureEnvelopeSchema, "The erasure"),
    ...problems("unauthenticated", "validation_failed", "idempotency_key_in_use", "idempotency_key_reused"),
  },
});

export const list = createRoute({
  operationId: "listErasures",
  ...requires("erasures:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's erasures, newest first",
  description: "Cursor-paged like the message list.",
  request: { query: PageQuery },
  responses: {
    200: json(ErasureListSchema, "A page of erasures"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getErasure",
  ...requires("erasures:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Get an erasure: its status, what it erased and when it completed",
  request: { params: ErasureIdParam },
  responses: {
    200: json(ErasureEnvelopeSchema, "The erasure"),
    ...problems("unauthenticated", "not_found"),
  },
});
