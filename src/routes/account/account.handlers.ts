import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { pricesOf } from "../../billing/prices";
import { readConfig } from "../../config";
import { type AccountRow, findAccount, updateAccount } from "../../db/queries/accounts";
import { listLedger } from "../../db/queries/ledger";
import { accountLimits, type LimitUsage } from "../../db/queries/limits";
import { usageBuckets } from "../../db/queries/usage";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { fromMinor, toMinor } from "../../lib/money";
import { formatTimestamp } from "../../lib/time";
import { toAccountRecord } from "../../presenters/account";
import { toLedgerRecord } from "../../presenters/ledger";
import { bucketRange, defaultBounds } from "../buckets";
import { pageLinks } from "../paging";
import type * as routes from "./account.routes";

// The key was live a moment ago; an account gone since is as good as unknown.
const noAccount = () => new ApiError("not_found", "No such account.");

/** The account as `GET /v1/account` shows it, with its limits and their use now. */
async function ownAccount(c: Context<AppEnv>, account: AccountRow) {
  const limits = await accountLimits(c.var.db, account.id);
  if (!limits) throw noAccount();
  const usage = ({ max, current }: LimitUsage) => ({ max, current });
  return {
    ...toAccountRecord(account, pricesOf(readConfig(c.env)), readConfig(c.env).MESSAGE_RETENTION_DAYS),
    limits: {
      max_sessions: usage(limits.max_sessions),
      max_draft_recipients: usage(limits.max_draft_recipients),
    },
  };
}

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const account = await findAccount(c.var.db, c.var.principal.accountId);
  if (!account) throw noAccount();
  return c.json({ success: true as const, data: await ownAccount(c, account) }, 200);
};

export const update: RouteHandler<typeof routes.update, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const threshold = body.low_balance_threshold;
  const account = await updateAccount(
    c.var.db,
    c.var.principal.accountId,
    {
      name: body.name,
      lowBalanceThreshold: threshold === undefined || threshold === null ? threshold : toMinor(threshold),
    },
    Date.now(),
  );
  if (!account) throw noAccount();
  return c.json({ success: true as const, data: await ownAccount(c, account) }, 200);
};

export const ledger: RouteHandler<typeof routes.ledger, AppEnv> = async (c) => {
  const params = c.req.valid("query");
  const query = {
    kinds: params["filter[kind]"] ?? [],
    timeFrom: params.time_from,
    timeTo: params.time_to,
    limit: params.limit,
    cursor: params.cursor ?? null,
  };
  const { rows, more } = await listLedger(c.var.db, c.var.principal.accountId, query);
  return c.json(
    {
      success: true as const,
      data: rows.map(toLedgerRecord),
      ...pageLinks(c, rows, { limit: query.limit, cursor: query.cursor, more }),
    },
    200,
  );
};

export const usage: RouteHandler<typeof routes.usage, AppEnv> = async (c) => {
  const { time_from, time_to, granularity } = c.req.valid("query");
  const { timeFrom, timeTo } = defaultBounds(time_from, time_to, Date.now());
  const range = bucketRange(timeFrom, timeTo, granularity);
  const rows = await usageBuckets(c.var.db, c.var.principal.accountId, range);
  return c.json(
    {
      success: true as const,
      data: {
        granularity,
        time_from: formatTimestamp(range.from),
        time_to: formatTimestamp(range.to),
        buckets: rows.map((row) => ({
          start: formatTimestamp(row.start),
          type: row.type,
          counts: {
            queued: row.queued,
            scheduled: row.scheduled,
            sent: row.sent,
            delivered: row.delivered,
            read: row.read,
            failed: row.failed,
          },
          cost: fromMinor(row.cost),
          refunded: fromMinor(row.refunded),
        })),
      },
    },
    200,
  );
};
