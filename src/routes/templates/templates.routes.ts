import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import {
  CreateTemplateBody,
  TemplateEnvelopeSchema,
  TemplateListQuery,
  TemplateListSchema,
} from "./templates.schemas";

const common = { tags: ["Sessions"] };

export const list = createRoute({
  operationId: "listSessionTemplates",
  ...requires("sessions:read"),
  ...common,
  method: "get",
  path: "/{id}/templates",
  summary: "List a Cloud API session's message templates",
  description:
    "The message templates of the session's WhatsApp Business Account, read from Meta (every page) and cached. " +
    "The cache is served for 5 minutes after it was read; after that, or with `refresh=true`, Meta is asked first. " +
    "When Meta cannot be reached and a cache exists it is served with `meta.stale: true`. " +
    "Only sessions on the `cloud_api` gateway have templates (others: 409 `not_supported_by_gateway`).",
  request: { params: IdParam, query: TemplateListQuery },
  responses: {
    200: json(TemplateListSchema, "The session's templates, by name and language"),
    ...problems(
      "unauthenticated",
      "not_found",
      "not_supported_by_gateway",
      "validation_failed",
      "gateway_rejected",
      "gateway_unavailable",
    ),
  },
});

export const create = createRoute({
  operationId: "createSessionTemplate",
  ...requires("sessions:write", idempotency),
  ...common,
  method: "post",
  path: "/{id}/templates",
  summary: "Submit a message template to Meta",
  description:
    "Submits the template to Meta for review on the session's WhatsApp Business Account and caches Meta's answer " +
    "(`status` is usually `PENDING`; a `template.status_changed` event follows Meta's decision). Meta's refusal is " +
    "422 `template_rejected` with Meta's message. Send an `Idempotency-Key` header to make retries safe.",
  request: { params: IdParam, headers: IdempotencyKeyHeader, body: jsonBody(CreateTemplateBody) },
  responses: {
    201: json(TemplateEnvelopeSchema, "The template, as Meta took it"),
    ...problems(
      "unauthenticated",
      "not_found",
      "not_supported_by_gateway",
      "validation_failed",
      "template_rejected",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "gateway_unavailable",
    ),
  },
});
