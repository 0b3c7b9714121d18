import type { RouteHandler } from "@hono/zod-openapi";
import { readConfig } from "../../config";
import { findEvent, listEvents } from "../../db/queries/events";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { EVENT_TYPES, type EventType } from "../../events/catalogue";
import { assertCanReadEvents, readableEventTypes } from "../../keys/event-access";
import type { Scope } from "../../keys/scopes";
import { toEventRecord } from "../../presenters/event";
import { pageLinks } from "../paging";
import type * as routes from "./events.routes";

/**
 * The types a list reads, for a key holding `scopes`: those asked for, each of which the key must
 * be able to read (else 403 `insufficient_scope`); without a filter, every type the key may read.
 * @returns the types (`[]` when that is every type: one query over all), or null when the key may
 *   read none (an empty page).
 */
function listedTypes(scopes: readonly Scope[], asked: EventType[] | undefined): EventType[] | null {
  if (asked) {
    assertCanReadEvents(scopes, asked);
    return asked;
  }
  const readable = readableEventTypes(scopes);
  if (readable.length === EVENT_TYPES.length) return [];
  return readable.length === 0 ? null : readable;
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const params = c.req.valid("query");
  const types = listedTypes(c.var.principal.scopes, params["filter[type]"]);
  const query = {
    types: types ?? [],
    timeFrom: params.time_from,
    timeTo: params.time_to,
    limit: params.limit,
    cursor: params.cursor ?? null,
  };
  const { rows, more } =
    types === null ? { rows: [], more: false } : await listEvents(c.var.db, c.var.principal.accountId, query);
  return c.json(
    {
      success: true as const,
      data: rows.map((row) => toEventRecord(row, readConfig(c.env).CHATAPP_GATEWAY)),
      ...pageLinks(c, rows, { limit: query.limit, cursor: query.cursor, more }),
    },
    200,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const row = await findEvent(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!row) throw new ApiError("not_found", "No such event.");
  assertCanReadEvents(c.var.principal.scopes, [row.type]);
  return c.json({ success: true as const, data: toEventRecord(row, readConfig(c.env).CHATAPP_GATEWAY) }, 200);
};
