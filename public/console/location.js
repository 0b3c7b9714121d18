// A `location` message in the console: the point and place of its `metadata.location` (docs/messages.md,
// Sending messages → Locations), a link that opens it on OpenStreetMap, and the text the list shows
// for it. Every value reaches the page through h(), as text or an attribute.

import { details, h } from "./dom.js";

/**
 * The location a message carries: `metadata.location` of a `location` message, when its latitude
 * and longitude are numbers; else null.
 * @returns {{latitude: number, longitude: number, name?: string, address?: string, url?: string} | null}
 */
export function locationOf(message) {
  const location = message.type === "location" ? message.metadata?.location : null;
  if (!location || !Number.isFinite(location.latitude) || !Number.isFinite(location.longitude)) return null;
  return location;
}

/**
 * The link that opens a point on OpenStreetMap, a marker on it at zoom 17: the link the API's own
 * pages use (src/lib/location.ts `mapLinkOf`).
 */
export function mapLink(location) {
  const { latitude, longitude } = location;
  return `https://www.openstreetmap.org/?mlat=${latitude}&mlon=${longitude}#map=17/${latitude}/${longitude}`;
}

/** A point as "latitude, longitude" in decimal degrees, as the API gives them. */
export function coordinates(location) {
  return `${location.latitude}, ${location.longitude}`;
}

/**
 * What the messages list shows for a message: its content, or for a location without a name or
 * address (content null) its coordinates; null when there is nothing to show.
 */
export function listText(message) {
  if (message.content != null) return message.content;
  const location = locationOf(message);
  return location ? coordinates(location) : (message.media_url ?? null);
}

/** A link that opens in a new tab and tells the site nothing of the console. */
function outLink(href, text, id) {
  return h("a", { href, id, target: "_blank", rel: "noopener noreferrer" }, text);
}

/** A received location's own link (a business location's page), linked only when it is http(s). */
function placeLink(url) {
  if (typeof url !== "string" || url === "") return null;
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  const web = parsed && (parsed.protocol === "https:" || parsed.protocol === "http:");
  return web ? outLink(parsed.href, url, "location-url") : h("span", { class: "break" }, url);
}

/**
 * The "Location" section of a message's page: name, address, coordinates and the map link, or null
 * for a message that carries no location.
 */
export function locationSection(message) {
  const location = locationOf(message);
  if (!location) return null;
  return h(
    "section",
    { "aria-labelledby": "location-title", id: "message-location" },
    h("h2", { id: "location-title" }, "Location"),
    details(
      [
        ["Name", location.name ? h("span", { id: "location-name" }, location.name) : null],
        ["Address", location.address ? h("span", { id: "location-address" }, location.address) : null],
        ["Coordinates", h("span", { class: "mono", id: "location-coordinates" }, coordinates(location))],
        location.url ? ["Link", placeLink(location.url)] : null,
      ].filter(Boolean),
    ),
    h("p", {}, outLink(mapLink(location), "Open on the map", "location-map")),
  );
}
