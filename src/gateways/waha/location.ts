import { z } from "zod";
import { type Location, LocationSchema, MAX_LOCATION_TEXT } from "../../lib/location";

/*
 * Locations as WAHA gives them: `WALocation` of WAHA's OpenAPI document (2026.7.1,
 * devlikeapro/waha-docs static/swagger/openapi.json), the `location` of a `WAMessage` "if the message is type
 * \"location\"": `latitude` and `longitude` (strings), `live` (boolean) required; `name`, `address`,
 * `url`, `description` and `thumbnail` (strings) optional. Read by the `message` webhook (events.ts)
 * and by the chat messages list that settles an unknown send (lookup.ts).
 */

/** A decimal number as a string, as `String(number)` writes one (an exponent allowed). */
const DECIMAL = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A `WALocation` coordinate: the document's decimal string, or a JSON number (read too, so an
 * engine that hands on its own numbers is not lost). Anything else fails, an empty string
 * included, which `Number("")` would read as 0, a point in the Gulf of Guinea.
 */
const Coordinate = z.union([z.number(), z.string().trim().regex(DECIMAL).transform(Number)]);

/** The `WALocation` fields read here; the rest (`live`, `thumbnail`) are let through unread. */
const WaLocation = z.looseObject({
  latitude: Coordinate,
  longitude: Coordinate,
  name: z.unknown().optional(),
  address: z.unknown().optional(),
  url: z.unknown().optional(),
  description: z.unknown().optional(),
});

/**
 * `value` (a `WAMessage.location`) as a {@link Location}, or null when it is none: absent, not an
 * object, or without coordinates that are a point on the map (lib/location.ts `LocationSchema`:
 * latitude −90…90, longitude −180…180). `name` and `address` are kept when they are non-blank
 * strings, cut to {@link MAX_LOCATION_TEXT} characters, and `url` when it is no longer.
 * `description` stands in for `name` when neither `name` nor `address` is given (WAHA's
 * `WALocation` had `description` as its only text before `name` and `address` were added:
 * devlikeapro/waha src/structures/responses.dto.ts, 2024). A live location (`live: true`) is read
 * as the point it showed when shared.
 */
export function wahaLocation(value: unknown): Location | null {
  const raw = WaLocation.safeParse(value);
  if (!raw.success) return null;
  const name = textOf(raw.data.name);
  const address = textOf(raw.data.address);
  const location = LocationSchema.safeParse({
    latitude: raw.data.latitude,
    longitude: raw.data.longitude,
    name: name ?? (address ? undefined : textOf(raw.data.description)),
    address,
    url: urlOf(raw.data.url),
  });
  return location.success ? location.data : null;
}

/**
 * A `WALocation` text field as a location keeps it: a non-blank string, cut to
 * {@link MAX_LOCATION_TEXT} UTF-16 units (the measure of `LocationSchema`'s `max`) without
 * splitting a surrogate pair; else absent.
 */
function textOf(value: unknown): string | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const cut = value.slice(0, MAX_LOCATION_TEXT);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** A `WALocation.url` as a location keeps it: a non-blank string no longer than the limit, else absent (a cut link is no link). */
function urlOf(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" && value.length <= MAX_LOCATION_TEXT
    ? value
    : undefined;
}
