import { ApiError, type FieldErrors } from "../errors";
import { toE164 } from "../lib/phone";
import { MESSAGE_STATUSES, MESSAGE_TYPES, type MessageStatus, type MessageType } from "./message-record";

/** Default and largest page sizes (interface document §8; issue 3). */
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export interface MessageFilters {
  toNumbers?: string[];
  fromNumber?: string;
  status?: MessageStatus;
  direction?: "incoming" | "outgoing";
  type?: MessageType;
  /** Session uuid. */
  sessionId?: string;
  /** Epoch ms bounds on `created_at`, inclusive. */
  timeFrom?: number;
  timeTo?: number;
}

/** A position in the newest-first order, and the direction to read from it. */
export interface Cursor {
  createdAt: number;
  id: string;
  direction: "next" | "prev";
}

export interface ListQuery {
  filters: MessageFilters;
  limit: number;
  cursor: Cursor | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KNOWN_FILTERS = new Set(["to_number", "from_number", "status", "direction", "type"]);

/**
 * Parses the message-list query string (interface document §4.2's table, issue 3's forms):
 * `filter[to_number]` as repeated `filter[to_number][]=`, indexed `filter[to_number][0]=` or
 * comma-separated; `session_id` as a uuid or `session_<uuid>`; `time_from`/`time_to` ISO 8601;
 * `limit` 1–100; `cursor` from a previous page. Unknown `filter[…]` names are refused.
 *
 * @throws ApiError `validation_failed` (422) naming every bad parameter by its query name
 *   (`filter[status]`, `limit`), as the route's own query validation does.
 */
export function parseListQuery(url: URL, pathSessionId?: string): ListQuery {
  const errors: FieldErrors = {};
  const fail = (field: string, message: string) => {
    errors[field] = [...(errors[field] ?? []), message];
  };
  const filters: MessageFilters = {};
  const single = (name: string): string | undefined => {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) fail(name, "give this parameter once");
    return values[0];
  };

  const toNumbers: string[] = [];
  for (const [key, value] of url.searchParams) {
    const filter = key.match(/^filter\[([^\]]*)\](.*)$/);
    if (!filter) continue;
    const [, name = "", rest = ""] = filter;
    if (!KNOWN_FILTERS.has(name)) fail(key, "unknown filter");
    else if (name === "to_number" && /^(\[\d*\])?$/.test(rest)) {
      for (const part of value.split(",")) {
        const e164 = toE164(part);
        if (e164) toNumbers.push(e164);
        else fail("filter[to_number]", `invalid phone number: ${part.slice(0, 40)}`);
      }
    } else if (rest !== "") {
      fail(
        key,
        name === "to_number"
          ? "use filter[to_number][]= or filter[to_number][0]="
          : "this filter takes one value",
      );
    }
  }
  if (toNumbers.length > 100) fail("filter[to_number]", "at most 100 numbers");
  if (toNumbers.length > 0) filters.toNumbers = [...new Set(toNumbers)];

  const from = single("filter[from_number]");
  if (from !== undefined) {
    const e164 = toE164(from);
    if (e164) filters.fromNumber = e164;
    else fail("filter[from_number]", "invalid phone number");
  }
  const status = single("filter[status]");
  if (status !== undefined) {
    if ((MESSAGE_STATUSES as readonly string[]).includes(status)) filters.status = status as MessageStatus;
    else fail("filter[status]", `one of ${MESSAGE_STATUSES.join(", ")}`);
  }
  const direction = single("filter[direction]");
  if (direction !== undefined) {
    if (direction === "incoming" || direction === "outgoing") filters.direction = direction;
    else fail("filter[direction]", "one of incoming, outgoing");
  }
  const type = single("filter[type]");
  if (type !== undefined) {
    if ((MESSAGE_TYPES as readonly string[]).includes(type)) filters.type = type as MessageType;
    else fail("filter[type]", `one of ${MESSAGE_TYPES.join(", ")}`);
  }

  const session = pathSessionId ?? single("session_id");
  if (session !== undefined) {
    const id = session.startsWith("session_") ? session.slice("session_".length) : session;
    if (UUID.test(id)) filters.sessionId = id.toLowerCase();
    else fail("session_id", "a session uuid or session_<uuid>");
  }
  for (const [name, key] of [
    ["time_from", "timeFrom"],
    ["time_to", "timeTo"],
  ] as const) {
    const value = single(name);
    if (value === undefined) continue;
    const ms = parseDateTime(value);
    if (ms === null) fail(name, "an ISO 8601 date-time");
    else filters[key] = ms;
  }

  let limit = DEFAULT_LIMIT;
  const rawLimit = single("limit");
  if (rawLimit !== undefined) {
    limit = /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) fail("limit", `an integer from 1 to ${MAX_LIMIT}`);
  }
  const rawCursor = single("cursor");
  const cursor = rawCursor === undefined ? null : decodeCursor(rawCursor);
  if (rawCursor !== undefined && !cursor) fail("cursor", "not a cursor from this API");

  if (Object.keys(errors).length > 0)
    throw new ApiError("validation_failed", "The query has invalid parameters.", { fields: errors });
  return { filters, limit, cursor };
}

/** Epoch ms of an ISO 8601 date or date-time (UTC unless it has an offset), or null. */
function parseDateTime(value: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.exec(value);
  if (!match) return null;
  // Date.parse rolls a day the month lacks over into the next month (2026-02-30 → March 2).
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Opaque cursor: base64url of `{"t":createdAt,"i":id,"d":"n"|"p"}` (Laravel-style `cursor`). */
export function encodeCursor(cursor: Cursor): string {
  const json = JSON.stringify({
    t: cursor.createdAt,
    i: cursor.id,
    d: cursor.direction === "next" ? "n" : "p",
  });
  return btoa(json).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

function decodeCursor(value: string): Cursor | null {
  if (value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
  try {
    const parsed: unknown = JSON.parse(atob(value.replaceAll("-", "+").replaceAll("_", "/")));
    if (typeof parsed !== "object" || parsed === null) return null;
    const { t, i, d } = parsed as Record<string, unknown>;
    if (
      typeof t !== "number" ||
      !Number.isSafeInteger(t) ||
      typeof i !== "string" ||
      !UUID.test(i) ||
      (d !== "n" && d !== "p")
    ) {
      return null;
    }
    return { createdAt: t, id: i, direction: d === "n" ? "next" : "prev" };
  } catch {
    return null;
  }
}
