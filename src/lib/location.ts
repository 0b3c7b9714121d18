import { z } from "zod";

/*
 * Location messages (docs/messages.md, Sending messages → Locations): a point on the map, with an optional
 * name and address, in the shape of the Cloud API's message object (Meta's OpenAPI document,
 * `LocationMessage.location` for a send, `LocationMessage_1.location` for a received one). One
 * shape serves every gateway; each gateway's adapter maps it to its own request.
 */

/** Longest `name` and `address` a send takes, in characters: this API's limit (Meta states none). */
export const MAX_LOCATION_TEXT = 1_000;

/**
 * A location as stored in a message's `metadata.location` and carried to the gateway: `latitude`
 * (−90…90) and `longitude` (−180…180) in decimal degrees (WGS 84, as WhatsApp shows them), and
 * `name` and `address` when given. `url` appears on a received location alone, when the network
 * gives one (Meta: "Usually only included for business locations").
 */
export const LocationSchema = z.object({
  latitude: z.number().min(-90).max(90).describe("Latitude in decimal degrees, −90 to 90."),
  longitude: z.number().min(-180).max(180).describe("Longitude in decimal degrees, −180 to 180."),
  name: z.string().min(1).max(MAX_LOCATION_TEXT).optional().describe("The place's name."),
  address: z.string().min(1).max(MAX_LOCATION_TEXT).optional().describe("The place's address."),
  url: z
    .string()
    .optional()
    .describe("A received location's link, when the network gives one (business locations)."),
});

/** A location: see {@link LocationSchema}. */
export type Location = z.infer<typeof LocationSchema>;

/**
 * The location an outgoing `location` message carries to its gateway: its queue message's
 * content, the JSON of the row's `metadata.location` (messages/dispatch-request.ts).
 * @throws Error when `content` is not such JSON (a message built by another path).
 */
export function locationOf(content: string | null): Location {
  return LocationSchema.parse(JSON.parse(content ?? "null"));
}

/** As {@link locationOf}, but null for content that is not a location's JSON, instead of throwing. */
export function readLocation(content: string | null): Location | null {
  try {
    return locationOf(content);
  } catch {
    return null;
  }
}

/**
 * The text a location message stores as its `content`, shown in lists and searched as any text:
 * its name, else its address, else null.
 */
export function locationLabel(location: Location): string | null {
  return location.name ?? location.address ?? null;
}

/** A link that opens the location on a map (OpenStreetMap), for the console and the sandbox. */
export function mapLinkOf(location: Pick<Location, "latitude" | "longitude">): string {
  const { latitude, longitude } = location;
  return `https://www.openstreetmap.org/?mlat=${latitude}&mlon=${longitude}#map=17/${latitude}/${longitude}`;
}
