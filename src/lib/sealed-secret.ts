/*
 * Secrets at rest: a third party's credential (a WhatsApp Cloud API access token) is kept only
 * sealed with AES-256-GCM (NIST SP 800-38D, Web Crypto) under a key the deployment holds as a
 * secret, never in clear in D1 or a Durable Object's storage.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Format tag of a sealed value, so a later scheme can be told apart. */
const VERSION = "v1";
/** Bytes of the random nonce, the size SP 800-38D §8.2 recommends for GCM. */
const NONCE_BYTES = 12;

/**
 * Seals `plaintext` under `keyBase64` (32 bytes, standard base64) bound to `context` (additional
 * authenticated data, e.g. the session id: a sealed value copied to another record does not open).
 * @returns `v1.<nonce>.<ciphertext with tag>`, both parts standard base64.
 */
export async function sealSecret(keyBase64: string, context: string, plaintext: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: encoder.encode(context) },
    await importKey(keyBase64),
    encoder.encode(plaintext),
  );
  return `${VERSION}.${toBase64(nonce)}.${toBase64(new Uint8Array(sealed))}`;
}

/**
 * Opens a value made by {@link sealSecret} with the same key and context.
 * @throws Error when it is malformed, or the key or context differ, or it was altered (GCM's tag).
 */
export async function openSecret(keyBase64: string, context: string, sealed: string): Promise<string> {
  const [version, nonce, ciphertext] = sealed.split(".");
  if (version !== VERSION || !nonce || !ciphertext) throw new Error("sealed secret: unknown format");
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(nonce), additionalData: encoder.encode(context) },
    await importKey(keyBase64),
    fromBase64(ciphertext),
  );
  return decoder.decode(plaintext);
}

/**
 * A 32-byte sealing key (standard base64, for {@link sealSecret}) derived from the deployment
 * secret `secret` for one purpose, `info`: HKDF-SHA-256 (RFC 5869) with a zero salt, so each
 * purpose gets its own key and a key of one purpose opens nothing of another.
 */
export async function deriveSealingKey(secret: string, info: string): Promise<string> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: encoder.encode(info) },
    material,
    256,
  );
  return toBase64(new Uint8Array(bits));
}

function importKey(keyBase64: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", fromBase64(keyBase64), "AES-GCM", false, ["encrypt", "decrypt"]);
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}
