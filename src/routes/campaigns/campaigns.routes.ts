import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../middleware/idempotency";
import { IdempotencyKeyHeader, IdParam, json, jsonBody, problems, requires } from "../openapi";
import { PageQuery } from "../paging";
import {
  AddedRecipientsSchema,
  AddRecipientsBody,
  CampaignEnvelopeSchema,
  CampaignListSchema,
  CreateCampaignBody,
  CreatedCampaignSchema,
  RecipientListSchema,
} from "./campaigns.schemas";

const common = { tags: ["Campaigns"] };

/** What create and add say about recipients known by a user id (src/campaigns/recipient-kinds.ts). */
const RECIPIENT_KINDS =
  "A recipient is `to_number` or `to_user_id` (a business-scoped user id or a LID, docs/contacts.md, Contacts): every " +
  "session of the campaign must send to that kind of user id, and a template campaign with an authentication " +
  "template with a code button takes no business-scoped user id (422 `recipient_not_supported`, `recipients` the " +
  "first 100 refused, `refused_count` how many; nothing is stored). ";

export const create = createRoute({
  operationId: "createCampaign",
  ...requires("campaigns:write", idempotency),
  ...common,
  method: "post",
  path: "/",
  summary: "Create a campaign (a draft)",
  description:
    "A bulk send across 1–20 connected sessions, created as a `draft` with up to 10,000 recipients; add more with " +
    "`POST …/recipients`. `content` is a template: each `{{name}}` takes the recipient's `variables.name`, and a " +
    "recipient missing one is 422 naming its index. Numbers are normalised as for sends; each address is kept once. " +
    RECIPIENT_KINDS +
    "The account's drafts together hold at most its `max_draft_recipients` (409 `account_limit_reached`, and nothing " +
    'is created). `type: "template"` (every session on the `cloud_api` gateway) sends `template` instead of ' +
    "`content`: its `variables` values take the recipients' `variables` the same way, and the template must be " +
    "APPROVED on every session (422 `template_not_found`). A draft is not charged, but a media campaign from an " +
    "account whose balance cannot pay one message of its type is 402 `insufficient_balance` before its `media_url` " +
    "is fetched, and nothing is created. Send an `Idempotency-Key` header to make retries safe.",
  request: {
    headers: IdempotencyKeyHeader,
    body: jsonBody(CreateCampaignBody),
  },
  responses: {
    201: json(CreatedCampaignSchema, "The draft, and how its recipients went"),
    ...problems(
      "unauthenticated",
      "not_found",
      "session_not_connected",
      "validation_failed",
      "account_limit_reached",
      "insufficient_balance",
      "media_unavailable",
      "template_not_found",
      "recipient_not_supported",
      "idempotency_key_in_use",
      "idempotency_key_reused",
      "service_unavailable",
    ),
  },
});

export const list = createRoute({
  operationId: "listCampaigns",
  ...requires("campaigns:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's campaigns, newest first",
  request: { query: PageQuery },
  responses: {
    200: json(CampaignListSchema, "A page of campaigns"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getCampaign",
  ...requires("campaigns:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Show a campaign with its statistics",
  request: { params: IdParam },
  responses: {
    200: json(CampaignEnvelopeSchema, "The campaign"),
    ...problems("unauthenticated", "not_found"),
  },
});

export const remove = createRoute({
  operationId: "deleteCampaign",
  ...requires("campaigns:write"),
  ...common,
  method: "delete",
  path: "/{id}",
  summary: "Delete a draft campaign",
  description:
    "Only a `draft` can be deleted (409 `campaign_not_draft` otherwise); its recipients and its stored copy of " +
    "`media_url` go with it.",
  request: { params: IdParam },
  responses: {
    204: { description: "Deleted" },
    ...problems("unauthenticated", "not_found", "campaign_not_draft"),
  },
});

export const addRecipients = createRoute({
  operationId: "addCampaignRecipients",
  ...requires("campaigns:write"),
  ...common,
  method: "post",
  path: "/{id}/recipients",
  summary: "Add recipients to a draft campaign",
  description:
    "Up to 10,000 per request, so a campaign reaches 100,000 without a body over 1 MiB. An address (a number or a " +
    "user id) already in the campaign is ignored (counted in `duplicates`). " +
    RECIPIENT_KINDS +
    "Only a `draft` takes recipients (409 `campaign_not_draft`), and " +
    "only while the account's drafts together stay within its `max_draft_recipients` (409 `account_limit_reached`: " +
    "none of the request's recipients is added).",
  request: { params: IdParam, body: jsonBody(AddRecipientsBody) },
  responses: {
    200: json(AddedRecipientsSchema, "How the recipients went"),
    ...problems(
      "unauthenticated",
      "not_found",
      "validation_failed",
      "recipient_not_supported",
      "campaign_not_draft",
      "account_limit_reached",
    ),
  },
});

export const listRecipients = createRoute({
  operationId: "listCampaignRecipients",
  ...requires("campaigns:read"),
  ...common,
  method: "get",
  path: "/{id}/recipients",
  summary: "List a campaign's recipients, the most recently added first",
  description:
    "Cursor-paged like the message list. Once the campaign starts, each shows its message id and status. Once the " +
    "hourly job has archived them (a campaign finished before the account's `message_retention_days`, its messages " +
    "archived): 404 `campaign_recipients_archived`, `archive_ids` naming the archives that hold them.",
  request: { params: IdParam, query: PageQuery },
  responses: {
    200: json(RecipientListSchema, "A page of recipients"),
    ...problems("unauthenticated", "not_found", "campaign_recipients_archived", "validation_failed"),
  },
});

/** One of the commands that move a started campaign: `POST /{id}/<command>`, answering the campaign. */
function command(
  operationId: string,
  path: string,
  summary: string,
  description: string,
  codes: Parameters<typeof problems>,
  withIdempotency = false,
) {
  return createRoute({
    operationId,
    ...common,
    method: "post",
    path,
    summary,
    description,
    ...(withIdempotency ? requires("campaigns:write", idempotency) : requires("campaigns:write")),
    request: {
      params: IdParam,
      ...(withIdempotency ? { headers: IdempotencyKeyHeader } : {}),
    },
    responses: {
      200: json(CampaignEnvelopeSchema, "The campaign after the command"),
      ...problems("unauthenticated", "not_found", ...codes),
    },
  });
}

export const start = command(
  "startCampaign",
  "/{id}/start",
  "Start a draft campaign",
  "Charges the whole campaign at once (402 `insufficient_balance`, and nothing changes, if the balance does not " +
    "cover it), skips recipients on the opt-out list (`skipped`, reason `recipient_opted_out`, not charged), and " +
    "moves it to `running`, or `scheduled` until its `scheduled_at`. Its messages are then created in steps and " +
    "spread over its sessions in turn, paced per session by `delay_range`, behind one-time codes and single sends. " +
    "Before the charge: a template campaign's template must still be APPROVED on every session (422 " +
    "`template_not_found`); every recipient known by a user id must still be of a kind every session and the " +
    "template send to (422 `recipient_not_supported`); any other campaign with Cloud API sessions needs every recipient not opted out inside " +
    "the 24-hour window of each of them (422 `outside_service_window`, `outside` the first 100 outside, " +
    "`outside_count` how many). Send an `Idempotency-Key` header to make retries safe.",
  [
    "campaign_not_draft",
    "campaign_empty",
    "session_not_connected",
    "validation_failed",
    "template_not_found",
    "recipient_not_supported",
    "outside_service_window",
    "insufficient_balance",
    "service_unavailable",
  ],
  true,
);

export const pause = command(
  "pauseCampaign",
  "/{id}/pause",
  "Pause a running campaign",
  "No more of its messages are handed to the gateway (one under way finishes); they stay `queued`. 503 " +
    "`service_unavailable` when a session could not be told: send the command again.",
  ["campaign_not_running", "service_unavailable"],
);

export const resume = command(
  "resumeCampaign",
  "/{id}/resume",
  "Resume a paused campaign",
  "Its sessions send its messages again, in order, paced as before.",
  ["campaign_not_paused", "service_unavailable"],
);

export const cancel = command(
  "cancelCampaign",
  "/{id}/cancel",
  "Cancel a campaign",
  "Any status before `completed`. Every message not yet sent becomes `failed` with reason `campaign_cancelled` and " +
    "is refunded, as is every recipient whose message was not created yet (`failed`, same reason).",
  ["campaign_finished", "service_unavailable"],
);
