import ipaddr from "ipaddr.js";

/** Longest accepted public URL (`media_url`, a webhook endpoint's `url`), in characters. */
export const MAX_PUBLIC_URL_LENGTH = 2048;

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
 * The only URLs {@link PublicUrlOptions.allowHttpLocalhost} lets through: `http://localhost` or
 * `http://127.0.0.1`, written exactly so (no other spelling of the address, no credentials), with
 * an optional port and any path.
 */
const HTTP_LOCALHOST = /^http:\/\/(?:localhost|127\.0\.0\.1)(?::[0-9]{1,5})?(?:[/?#]|$)/i;

/** Exceptions to {@link publicHttpsUrlProblem}'s rule. */
interface PublicUrlOptions {
  /**
   * Also accept `http://localhost[:port]` and `http://127.0.0.1[:port]` URLs (a developer's
   * local receiver under `wrangler dev`), and only those. Default false.
   */
  allowHttpLocalhost?: boolean;
}

/**
 * Why `value` cannot be a URL the service fetches or posts to, or null when it can. Such a URL
 * must not point inside a network (SSRF, OWASP Server-Side Request Forgery Prevention Cheat
 * Sheet): it must be an absolute `https` URL of at most {@link MAX_PUBLIC_URL_LENGTH} characters,
 * without credentials, whose host is a public name or a public (unicast) IP address — not
 * localhost, loopback, private, link-local, carrier-grade NAT, unique-local, metadata or otherwise
 * reserved ranges (classified by `ipaddr.js`). IPv4 written in decimal, octal or hex is
 * normalised by the URL parser first. Names that resolve to private addresses (DNS rebinding)
 * must be refused by the egress policy of whoever fetches: no DNS answer here can stay true until
 * then. `options.allowHttpLocalhost` makes the one exception described on {@link PublicUrlOptions}.
 *
 * @returns a short message for the field's error list (e.g. `must use https`), or null.
 */
export function publicHttpsUrlProblem(value: string, options: PublicUrlOptions = {}): string | null {
  if (value.length > MAX_PUBLIC_URL_LENGTH) return `must be at most ${MAX_PUBLIC_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (options.allowHttpLocalhost && HTTP_LOCALHOST.test(value)) return null;
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

/**
 * The only `media_url`s {@link MediaUrlOptions.allowLocalhost} lets through: `http` or `https` to
 * `localhost` or `127.0.0.1`, written exactly so (no other spelling of the address, no
 * credentials), with any port or none, and any path.
 */
const LOCALHOST_MEDIA = /^https?:\/\/(?:localhost|127\.0\.0\.1)(?::[0-9]{1,5})?(?:[/?#]|$)/i;

/** Exceptions to {@link mediaUrlProblem}'s rule. */
export interface MediaUrlOptions {
  /**
   * Also accept `http(s)://localhost[:port]` and `http(s)://127.0.0.1[:port]` URLs (a file server
   * on the developer's machine under `wrangler dev`; `MEDIA_ALLOW_HTTP_LOCALHOST`), and only those.
   * Default false.
   */
  allowLocalhost?: boolean;
}

/**
 * Whether `value` is one of the local URLs {@link LOCALHOST_MEDIA} describes: at most
 * {@link MAX_PUBLIC_URL_LENGTH} characters, a URL the parser takes (port ≤ 65535), whose parsed
 * host is `localhost` or `127.0.0.1` and which carries no credentials. The pattern and the
 * parser must agree, so a spelling they read differently (`http://localhost:80@evil.test/`,
 * `http://localhost\@evil.test/`) is not one.
 */
export function isLocalhostMediaUrl(value: string): boolean {
  if (value.length > MAX_PUBLIC_URL_LENGTH || !LOCALHOST_MEDIA.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.hostname === "localhost" || url.hostname === "127.0.0.1") && !url.username && !url.password;
}

/**
 * Why `value` cannot be a `media_url`, or null when it can: {@link publicHttpsUrlProblem}'s rule
 * without exceptions, on the default https port only (no `:8443`; `:443` is the default written
 * out). The service fetches the URL itself and follows a redirect only to the same rule on the
 * same host (src/media/fetch.ts; docs/security.md, Media). `options.allowLocalhost` makes the
 * one exception described on {@link MediaUrlOptions} (docs/configuration.md, Overview:
 * `MEDIA_ALLOW_HTTP_LOCALHOST`); a URL outside it gets the problem it has without it.
 */
export function mediaUrlProblem(value: string, options: MediaUrlOptions = {}): string | null {
  if (options.allowLocalhost && isLocalhostMediaUrl(value)) return null;
  const problem = publicHttpsUrlProblem(value);
  if (problem) return problem;
  // The URL parser drops the scheme's default port, so any port left is another one.
  return new URL(value).port === "" ? null : "must use port 443";
}
