import type { RouteHandler } from "@hono/zod-openapi";
import { readConfig } from "../../config";
import { findAccount } from "../../db/queries/accounts";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { fromMinor } from "../../lib/money";
import { formatTimestamp } from "../../lib/time";
import { MESSAGE_TYPES, type MessageType } from "../../messages/message-record";
import { priceOf } from "../../messages/send";
import type * as routes from "./account.routes";

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const account = await findAccount(c.var.db, c.var.principal.accountId);
  // The key was live a moment ago; an account gone since is as good as unknown.
  if (!account) throw new ApiError("not_found", "No such account.");
  const config = readConfig(c.env);
  const prices = Object.fromEntries(
    MESSAGE_TYPES.map((type) => [type, fromMinor(priceOf(config, type))]),
  ) as Record<MessageType, number>;
  return c.json(
    {
      success: true as const,
      data: {
        id: account.id,
        name: account.name,
        balance: fromMinor(account.balance),
        remaining_messages: Math.floor(account.balance / priceOf(config, "text")),
        prices,
        created_at: formatTimestamp(account.createdAt),
        updated_at: formatTimestamp(account.updatedAt),
      },
    },
    200,
  );
};
