import type { RouteHandler } from "@hono/zod-openapi";
import { toAccountRecord } from "../../accounts/account-record";
import { toLedgerRecord } from "../../billing/ledger-record";
import { pricesOf } from "../../billing/prices";
import { readConfig } from "../../config";
import { findAccount, updateAccount } from "../../db/queries/accounts";
import { listLedger } from "../../db/queries/ledger";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { toMinor } from "../../lib/money";
import { pageLinks } from "../paging";
import type * as routes from "./account.routes";

// The key was live a moment ago; an account gone since is as good as unknown.
const noAccount = () => new ApiError("not_found", "No such account.");

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const account = await findAccount(c.var.db, c.var.principal.accountId);
  if (!account) throw noAccount();
  const data = toAccountRecord(account, pricesOf(readConfig(c.env)));
  return c.json({ success: true as const, data }, 200);
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
  const data = toAccountRecord(account, pricesOf(readConfig(c.env)));
  return c.json({ success: true as const, data }, 200);
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
