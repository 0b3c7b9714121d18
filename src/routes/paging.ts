import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Cursor, decodeCursor, encodeCursor, MAX_CURSOR_LENGTH } from "../lib/cursor";

// The parts every cursor-paged list shares: its query parameters (one schema each, which parses,
// validates and documents) and the page around its rows, in the shape of Laravel's cursor
// paginator resource (`links` and `meta`).

/**
 * Default page size and the largest one, this API's rule (`limit` of `GET /v1/chatapp/messages` in
 * openapi.json).
 */
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

/** An error message for a query parameter; a parameter given more than once gets its own. */
export const once =
  (text: string) =>
  (issue: { input?: unknown }): string =>
    Array.isArray(issue.input) ? "give this parameter once" : text;

/**
 * A bound on `created_at`: an RFC 3339 date-time (`Z`, an offset, or neither for UTC; any
 * fractional digits, so the API's own timestamps work) or a date alone (midnight UTC). Days a month
 * lacks (2026-02-30) are refused, not rolled over. Parses to epoch ms.
 */
export const TimeBound = z
  .union([z.iso.datetime({ offset: true, local: true }).max(64), z.iso.date().max(10)], {
    error: once("an ISO 8601 date-time, e.g. 2026-06-01T10:30:00Z"),
  })
  .transform((value) => {
    const zoned = !value.includes("T") || /(?:Z|[+-]\d{2}:\d{2})$/i.test(value);
    return Date.parse(zoned ? value : `${value}Z`);
  });

/**
 * `limit`: decimal digits only (`z.coerce.number()` would take `1e2`, ` 5` and `0x10`), then an
 * integer from 1 to {@link MAX_LIMIT}; `fallback` when absent.
 */
export const pageLimit = (fallback: number) =>
  z
    .preprocess(
      (value) => (typeof value === "string" && /^\d{1,4}$/.test(value) ? Number(value) : value),
      z
        .int({ error: once(`an integer from 1 to ${MAX_LIMIT}`) })
        .min(1, `an integer from 1 to ${MAX_LIMIT}`)
        .max(MAX_LIMIT, `an integer from 1 to ${MAX_LIMIT}`),
    )
    .default(fallback)
    .openapi({ description: `Page size, 1–${MAX_LIMIT}.`, format: "int32" });

/** `limit` of most lists: {@link pageLimit} with {@link DEFAULT_LIMIT}. */
export const Limit = pageLimit(DEFAULT_LIMIT);

/** `cursor`: a `meta.next_cursor` or `meta.prev_cursor` of a previous page; parses to a {@link Cursor}. */
export const CursorParam = z
  .string({ error: once("not a cursor from this API") })
  .max(MAX_CURSOR_LENGTH, "not a cursor from this API")
  .transform((value, ctx): Cursor => {
    const cursor = decodeCursor(value);
    if (cursor) return cursor;
    ctx.addIssue({ code: "custom", message: "not a cursor from this API", input: value });
    return z.NEVER;
  })
  .openapi({ description: "`meta.next_cursor` or `meta.prev_cursor` of a previous page." });

/**
 * A `filter[…]` of a list that takes some of `values`: the parameter repeated
 * (`filter[x]=a&filter[x]=b`) or comma-separated (`a,b`), parsed to the distinct values given.
 * Anything else is refused with the list of allowed values. `what` names them in the document
 * ("Event types").
 */
export function enumListFilter<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((value) => [...new Set((Array.isArray(value) ? value : [value]).flatMap((v) => v.split(",")))])
    .pipe(z.array(z.enum(values, { error: `each one of ${values.join(", ")}` })).max(values.length))
    .openapi({
      type: "array",
      maxItems: values.length,
      items: { type: "string", enum: [...values] },
      description: `${what} to list (repeat the parameter, or separate with commas). Default: all.`,
    });
}

/** The query of a list with no filters: `limit` and `cursor`. */
export const PageQuery = z.object({ limit: Limit, cursor: CursorParam.optional() });

/** `links` and `meta` of a cursor page (Laravel's cursor paginator resource). */
export const PageLinksSchema = {
  links: z.object({
    first: z.null(),
    last: z.null(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
  }),
  meta: z.object({
    path: z.string(),
    per_page: z.int(),
    next_cursor: z.string().nullable(),
    prev_cursor: z.string().nullable(),
  }),
};

/**
 * The `links` and `meta` of a page of `rows` (newest first) read with `cursor`, where `more`
 * says whether rows lie beyond the page in the direction read. The links repeat the request's own
 * query (filters included) with the new cursor.
 */
export function pageLinks(
  c: Context,
  rows: { createdAt: number; id: string }[],
  page: { limit: number; cursor: Cursor | null; more: boolean },
) {
  const backwards = page.cursor?.direction === "prev";
  const first = rows[0];
  const last = rows.at(-1);
  const next =
    last && (backwards || page.more)
      ? encodeCursor({ createdAt: last.createdAt, id: last.id, direction: "next" })
      : null;
  const prev =
    first && page.cursor && (!backwards || page.more)
      ? encodeCursor({ createdAt: first.createdAt, id: first.id, direction: "prev" })
      : null;
  const url = new URL(c.req.url);
  const path = `${url.origin}${url.pathname}`;
  const linkTo = (cursor: string | null) => {
    if (!cursor) return null;
    const params = new URLSearchParams(url.search);
    params.set("cursor", cursor);
    return `${path}?${params}`;
  };
  return {
    links: { first: null, last: null, prev: linkTo(prev), next: linkTo(next) },
    meta: { path, per_page: page.limit, next_cursor: next, prev_cursor: prev },
  };
}
