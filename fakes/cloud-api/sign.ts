/** The header Meta signs webhook posts with (Meta's "Webhooks" guide, "Validate payloads"). */
export const SIGNATURE_HEADER = "X-Hub-Signature-256";

/**
 * The value of {@link SIGNATURE_HEADER} for a webhook body: `sha256=` followed by the lowercase
 * hex HMAC-SHA256 of the body's UTF-8 bytes under the app secret (Meta's "Webhooks" guide,
 * "Validate payloads"). WebCrypto, so it runs in workerd and Node alike.
 */
export async function signBody(appSecret: string, body: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(appSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(body)));
  return `sha256=${Array.from(mac, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
