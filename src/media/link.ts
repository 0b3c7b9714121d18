import { hmacSha256Hex, timingSafeEqual } from "../lib/crypto";

/*
 * Signed links to a stored media file: what a real gateway (WAHA, Evolution API) is given to
 * fetch instead of the caller's URL. `GET <PUBLIC_URL>/media/<key>?expires=<s>&signature=<hex>`
 * answers the stored bytes while the link is valid (src/routes/media).
 */

/**
 * Seconds a signed media link stays valid: 15 minutes. The gateway fetches the file while our
 * send call waits (`GATEWAY_MEDIA_TIMEOUT_MS`, 60 s by default); every attempt signs a new link,
 * so the margin only has to cover a slow gateway and clock skew between it and us.
 */
export const MEDIA_LINK_TTL_SECONDS = 15 * 60;

/** What signs media links: the service's public origin and the `MEDIA_URL_SECRET`. */
export interface MediaLinkSigner {
  /** `PUBLIC_URL` without a trailing slash. */
  publicUrl: string;
  secret: string;
}

/** Hex HMAC-SHA256 (RFC 2104) under `secret` of `<key>\n<expires>`: binds the file and the expiry. */
function signature(secret: string, key: string, expires: number): Promise<string> {
  return hmacSha256Hex(secret, `${key}\n${expires}`);
}

/**
 * The signed link to stored media `key`, valid for {@link MEDIA_LINK_TTL_SECONDS} from `now`
 * (epoch ms): `<publicUrl>/media/<key>?expires=<epoch seconds>&signature=<64 hex>`.
 */
export async function signedMediaUrl(signer: MediaLinkSigner, key: string, now: number): Promise<string> {
  const expires = Math.floor(now / 1000) + MEDIA_LINK_TTL_SECONDS;
  const query = new URLSearchParams({
    expires: String(expires),
    signature: await signature(signer.secret, key, expires),
  });
  return `${signer.publicUrl}/media/${encodeURIComponent(key)}?${query}`;
}

/**
 * Whether a media link's `expires` and `signature` (query values as received, possibly missing)
 * are valid for `key` at `now` (epoch ms): `valid`, `expired` (a genuine link past its time), or
 * `invalid` (missing, malformed or not ours; compared in constant time).
 */
export async function checkMediaLink(
  secret: string,
  key: string,
  query: { expires?: string; signature?: string },
  now: number,
): Promise<"valid" | "expired" | "invalid"> {
  const { expires, signature: given } = query;
  if (!expires || !/^[0-9]{1,12}$/.test(expires) || !given || !/^[0-9a-f]{64}$/.test(given)) return "invalid";
  const expected = await signature(secret, key, Number(expires));
  if (!timingSafeEqual(expected, given)) return "invalid";
  return Number(expires) * 1000 > now ? "valid" : "expired";
}
