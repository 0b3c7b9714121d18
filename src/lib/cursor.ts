/**
 * Keyset cursors of the API's lists, newest first by `(created_at, id)`: a position and the
 * direction to read from it. Laravel's cursor paginator is the model for the name and the shape.
 */
export interface Cursor {
  /** Epoch ms. */
  createdAt: number;
  id: string;
  direction: "next" | "prev";
}

/** Longest cursor accepted; the API's own cursors are about 110 characters. */
export const MAX_CURSOR_LENGTH = 200;

/**
 * The ids a cursor may hold: a uuid (messages), an event or erasure id (`evt_` or `ers_` and 32
 * hex digits), or an E.164 number (opt-outs, keyed by the number: `+`, a non-zero digit, at most
 * 15 digits in all, ITU-T E.164 §6.1) or the erased form of an address that stands for one
 * (`erased:` and 64 hex digits, src/erasures/address.ts).
 */
const ID =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:evt|ers)_[0-9a-f]{32}|\+[1-9][0-9]{1,14}|erased:[0-9a-f]{64})$/i;

/**
 * Encodes a cursor as the opaque string of `meta.next_cursor`/`meta.prev_cursor`: base64url
 * (RFC 4648 §5, no padding) of `{"t":createdAt,"i":id,"d":"n"|"p"}`, `t` in epoch ms. Laravel's
 * cursor paginator is the model for the name and the shape of the page around it.
 */
export function encodeCursor(cursor: Cursor): string {
  const json = JSON.stringify({
    t: cursor.createdAt,
    i: cursor.id,
    d: cursor.direction === "next" ? "n" : "p",
  });
  return btoa(json).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/**
 * Decodes a string made by {@link encodeCursor}.
 *
 * @returns the cursor, or null when the value is longer than {@link MAX_CURSOR_LENGTH}, is not
 *   base64url, or does not hold an integer time, an id and a direction. Never throws.
 */
export function decodeCursor(value: string): Cursor | null {
  if (value.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
  try {
    const parsed: unknown = JSON.parse(atob(value.replaceAll("-", "+").replaceAll("_", "/")));
    if (typeof parsed !== "object" || parsed === null) return null;
    const { t, i, d } = parsed as Record<string, unknown>;
    if (
      typeof t !== "number" ||
      !Number.isSafeInteger(t) ||
      typeof i !== "string" ||
      !ID.test(i) ||
      (d !== "n" && d !== "p")
    ) {
      return null;
    }
    return { createdAt: t, id: i, direction: d === "n" ? "next" : "prev" };
  } catch {
    return null;
  }
}
