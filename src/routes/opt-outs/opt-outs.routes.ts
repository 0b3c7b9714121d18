import { createRoute } from "@hono/zod-openapi";
import { json, jsonBody, problems, requires } from "../openapi";
import { PageQuery } from "../paging";
import { CreateOptOutBody, OptOutEnvelopeSchema, OptOutListSchema, ToNumberParam } from "./opt-outs.schemas";

const common = { tags: ["Opt-outs"] };

const scope =
  "Bulk campaigns skip the numbers on this list. Single sends (`POST /v1/chatapp/messages`) and one-time codes do not: " +
  "they are transactional, sent because the recipient asked for them.";

export const list = createRoute({
  operationId: "listOptOuts",
  ...requires("opt-outs:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's opt-outs, newest first",
  description: `The account's suppression list. ${scope} Cursor-paged like the message list.`,
  request: { query: PageQuery },
  responses: {
    200: json(OptOutListSchema, "A page of opt-outs"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const create = createRoute({
  operationId: "createOptOut",
  ...requires("opt-outs:write"),
  ...common,
  method: "post",
  path: "/",
  summary: "Add a number to the opt-out list",
  description:
    `${scope} The number is normalised to E.164 as for sends; a contact known without a number is added by \`to_user_id\`. ` +
    "Every other address the account's contacts link to it (their number and user ids) is added with it. Adding one already on the list changes nothing " +
    "and answers 200 with the record as it is (its `source` may be `keyword`), so a retry is safe.",
  request: { body: jsonBody(CreateOptOutBody) },
  responses: {
    201: json(OptOutEnvelopeSchema, "The number was added"),
    200: json(OptOutEnvelopeSchema, "The number was already on the list"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getOptOut",
  ...requires("opt-outs:read"),
  ...common,
  method: "get",
  path: "/{to_number}",
  summary: "Show a number's opt-out",
  description: "200 when the number is on the account's list, 404 `not_found` when it is not.",
  request: { params: ToNumberParam },
  responses: {
    200: json(OptOutEnvelopeSchema, "The number is opted out"),
    ...problems("unauthenticated", "not_found"),
  },
});

export const remove = createRoute({
  operationId: "deleteOptOut",
  ...requires("opt-outs:write"),
  ...common,
  method: "delete",
  path: "/{to_number}",
  summary: "Remove a number from the opt-out list",
  description:
    "Campaigns may message the number again, and every other address the account's contacts link to it (their number and user ids), " +
    "which are removed with it. Do this only when the contact opted back in. " +
    "A contact who texts an opt-out keyword again is added again.",
  request: { params: ToNumberParam },
  responses: { 204: { description: "Removed" }, ...problems("unauthenticated", "not_found") },
});
