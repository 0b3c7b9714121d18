import type { RouteHandler } from "@hono/zod-openapi";
import { findContact, identifiersOfContact, listContacts } from "../../db/queries/contacts";
import { contactOptedOut } from "../../db/queries/opt-outs";
import type { AppEnv } from "../../env";
import { erasedFormsOf } from "../../erasures/opt-outs";
import { ApiError } from "../../errors";
import { toContactDetail, toContactRecord } from "../../presenters/contact";
import { pageLinks } from "../paging";
import type * as routes from "./contacts.routes";

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  const filters = {
    sessionId: query["filter[session_id]"]?.toLowerCase(),
    phoneNumber: query["filter[phone_number]"],
    userId: query["filter[user_id]"],
    username: query["filter[username]"],
  };
  const { rows, more } = await listContacts(c.var.db, c.var.principal.accountId, { ...page, filters });
  return c.json(
    { success: true as const, data: rows.map(toContactRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findContact(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "The account has no such contact.");
  const identifiers = await identifiersOfContact(c.var.db, row.id);
  const addresses = identifiers.filter((i) => i.kind !== "parent_user_id").map((i) => i.value);
  const erased = await erasedFormsOf(c.env, row.accountId, addresses);
  const optedOut = await contactOptedOut(c.var.db, row.accountId, row.id, erased);
  return c.json({ success: true as const, data: toContactDetail(row, identifiers, optedOut) }, 200);
};
