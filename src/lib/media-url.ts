import ipaddr from "ipaddr.js";

/** Longest accepted `media_url` (issue 3). */
export const MAX_MEDIA_URL_LENGTH = 2048;

/** Host names that reach the machine itself or a cloud metadata service. */
const BLOCKED_HOSTS = new Set([
  "localhost",
  "metadata",
  "metadata.google.internal",
  "instance-data",
  "metadata.azure.com",
]);
/** Host name suffixes of the same kind (RFC 6761 `.localhost`, internal-only zones). */
const BLOCKED_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa"];

/**
 * Why `value` cannot be a `media_url`, or null when it can. The gateway fetches this URL, so it
 * must not point inside a network (SSRF, OWASP SSRF Prevention Cheat Sheet): it must be an
 * absolute `https` URL of at most 2,048 characters, without credentials, whose host is a public
 * name or a public (unicast) IP address — not localhost, loopback, private, link-local,
 * carrier-grade NAT, unique-local, metadata or otherwise reserved ranges (classified by
 * `ipaddr.js`). IPv4 written in decimal, octal or hex is normalised by the URL parser first.
 * Names that resolve to private addresses (DNS rebinding) must be refused by the gateway's own
 * egress policy: no DNS answer here can stay true until the gateway fetches.
 */
export function mediaUrlProblem(value: string): string | null {
  if (value.length > MAX_MEDIA_URL_LENGTH) return `must be at most ${MAX_MEDIA_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:") return "must use https";
  if (url.username || url.password) return "must not contain credentials";
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal)) {
    const range = ipaddr.process(literal).range();
    return range === "unicast" ? null : `must not point at a ${range} address`;
  }
  if (!host.includes(".") || BLOCKED_HOSTS.has(host) || BLOCKED_SUFFIXES.some((s) => host.endsWith(s))) {
    return "must point at a public host";
  }
  return null;
}
