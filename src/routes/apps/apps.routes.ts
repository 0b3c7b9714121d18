import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  AppEnvelopeSchema,
  AppListSchema,
  CreateAppBody,
  CreatedAppEnvelopeSchema,
  ListQuery,
  UpdateAppBody,
} from "./apps.schemas";

const tags = ["Apps"];
const common = { tags };

const sessionRule =
  "`chatapp_session_id` must name a session of the same account (422 `validation_failed` with a `chatapp_session_id` field error otherwise).";

export const list = createRoute({
  operationId: "listApps",
  ...requires("apps:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's apps, newest first, a page at a time",
  description:
    "Laravel's length-aware paginator shape: `data`, `links` and `meta`. Deleted apps are not listed.",
  request: { query: ListQuery },
  responses: {
    200: json(AppListSchema, "One page of apps"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const create = createRoute({
  operationId: "createApp",
  ...requires("apps:write", idempotency),
  ...common,
  method: "post",
  path: "/",
  summary: "Create an app",
  description: `Without \`message_template\` the app gets a template with its name written in; without \`code_size\`, 6 digits. ${sessionRule} The response has no \`deleted_at\`. Send an \`Idempotency-Key\` header to make retries safe: the first response is replayed for 24 hours.`,
  request: {
    headers: IdempotencyKeyHeader,
    body: jsonBody(CreateAppBody),
  },
  responses: {
    201: json(CreatedAppEnvelopeSchema, "The new app"),
    ...problems("unauthenticated", "validation_failed", "idempotency_key_in_use", "idempotency_key_reused"),
  },
});

export const show = createRoute({
  operationId: "getApp",
  ...requires("apps:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show an app",
  request: { params: IdParam },
  responses: { 200: json(AppEnvelopeSchema, "The app"), ...problems("not_found") },
});

const updateRoute = (method: "put" | "patch") =>
  createRoute({
    ...common,
    operationId: method === "put" ? "replaceApp" : "updateApp",
    ...requires("apps:write"),
    method,
    path: "/{id}",
    summary: `Update an app (${method.toUpperCase()}: any subset of the fields)`,
    description: `PUT and PATCH behave alike: fields left out keep their value; \`chatapp_session_id: null\` removes the session and \`allowed_countries: null\` allows every country again. ${sessionRule} \`updated_at\` always changes.`,
    request: { params: IdParam, body: jsonBody(UpdateAppBody) },
    responses: {
      200: json(AppEnvelopeSchema, "The updated app"),
      ...problems("not_found", "validation_failed"),
    },
  });

export const replace = updateRoute("put");
export const update = updateRoute("patch");

export const remove = createRoute({
  operationId: "deleteApp",
  ...requires("apps:write"),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete an app",
  description: "A soft delete: the app keeps its row with `deleted_at` set, and is then not found anywhere.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted" }, ...problems("not_found") },
});
