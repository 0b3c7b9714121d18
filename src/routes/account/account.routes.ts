import { createRoute } from "@hono/zod-openapi";
import { json, jsonBody, problems, requires } from "../openapi";
import {
  AccountEnvelopeSchema,
  LedgerListQuery,
  LedgerListSchema,
  UpdateAccountBody,
  UsageQuery,
  UsageSchema,
} from "./account.schemas";

const common = { tags: ["Account"] };

export const show = createRoute({
  operationId: "getOwnAccount",
  ...requires("account:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "Show the caller's account: its balance and what it buys",
  description:
    "The account the API key belongs to, with its balance, the messages of each type that balance covers, the price " +
    "of each message type, the low-balance alert's threshold, and its `limits` (`max_sessions`, `max_draft_recipients`) " +
    "with what it uses of each now.",
  responses: { 200: json(AccountEnvelopeSchema, "The account"), ...problems("unauthenticated") },
});

export const update = createRoute({
  operationId: "updateOwnAccount",
  ...requires("account:write"),
  ...common,
  method: "patch",
  path: "/",
  summary: "Rename the caller's account or set its low-balance alert",
  description:
    "`name` (1–100 characters) and `low_balance_threshold` (major units, at most 2 decimals; `null` turns the alert off). " +
    "A charge that takes the balance from the threshold or more to below it records `account.balance_low`, once per " +
    "crossing: again only after a credit or refund has lifted the balance back to the threshold. Setting a threshold " +
    "above the balance records nothing by itself.",
  request: { body: jsonBody(UpdateAccountBody) },
  responses: {
    200: json(AccountEnvelopeSchema, "The account after the change"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const ledger = createRoute({
  operationId: "listLedgerEntries",
  ...requires("account:read"),
  ...common,
  method: "get",
  path: "/ledger",
  summary: "List the account's charges, refunds and credits, newest first",
  description:
    "Every change of the balance, with the balance after it and its `source`: the messages it paid for or refunded " +
    "(the first 100 ids), the campaign or OTP behind it, or an admin credit's note. Cursor-paged like the message list; " +
    "`filter[kind]` (repeat it or separate with commas), `time_from` and `time_to` (inclusive).",
  request: { query: LedgerListQuery },
  responses: {
    200: json(LedgerListSchema, "A page of ledger entries"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const usage = createRoute({
  operationId: "getOwnUsage",
  ...requires("account:read"),
  ...common,
  method: "get",
  path: "/usage",
  summary: "The account's outgoing messages per hour or day and type: counts by status, cost and refunds",
  description:
    "Buckets are UTC hours or days. A message counts in the bucket it was created in, and under its status now, so " +
    "a bucket's counts move as its messages are sent, delivered, read or failed; `cost` is what they cost and " +
    "`refunded` what of it came back (failed messages). Incoming messages are not counted. The range runs from " +
    "`time_from` rounded down to `time_to` rounded up to the granularity, at most 31 days by hour and 366 by day " +
    "(422 `time_range_invalid`, also when `time_to` is not after `time_from`). `time_to` defaults to now and " +
    "`time_from` to 30 days before `time_to` rounded up to the end of its UTC day: with neither, the last 30 UTC " +
    "days (by day unless `granularity` is `hour`), from the start of the UTC day 29 days ago to the end of today. Read from counters kept as messages " +
    "move, so the cost of a request does not grow with the number of messages.",
  request: { query: UsageQuery },
  responses: {
    200: json(UsageSchema, "Usage per bucket and type"),
    ...problems("unauthenticated", "validation_failed", "time_range_invalid"),
  },
});
