/**
 * Origins of the faked gateways and the public URL the gateway projects run with (see
 * vitest.config.ts). Plain constants, shared by the Vitest config (Node) and the tests (workerd).
 */
export const WAHA_URL = "http://waha.test:3000";
export const WAHA_API_KEY = "test-waha-api-key";
/** WAHA's webhook HMAC key (at least 32 characters, config.ts `MIN_GATEWAY_SECRET_LENGTH`). */
export const WAHA_WEBHOOK_HMAC_KEY = "test-waha-hmac-key-0123456789abcdef";
export const EVOLUTION_URL = "http://evolution.test:8080";
/** Evolution API's global key (at least 32 characters). */
export const EVOLUTION_API_KEY = "test-evolution-api-key-0123456789abcdef";
export const PUBLIC_URL = "https://api.example.test";
/** The key of signed media links in the gateway projects (at least 32 characters). */
export const MEDIA_URL_SECRET = "test-media-url-secret-0123456789abcdef";
/** Gateway calls time out after this many milliseconds in the gateway projects. */
export const GATEWAY_TIMEOUT_MS = 500;

/** The WAHA settings the gateway projects run with, as `readConfig` makes them from the above. */
export const WAHA_SETTINGS = {
  kind: "waha",
  url: WAHA_URL,
  apiKey: WAHA_API_KEY,
  hmacKey: WAHA_WEBHOOK_HMAC_KEY,
  publicUrl: PUBLIC_URL,
  mediaUrlSecret: MEDIA_URL_SECRET,
  timeoutMs: GATEWAY_TIMEOUT_MS,
  mediaTimeoutMs: GATEWAY_TIMEOUT_MS,
} as const;

/** The Evolution API settings the gateway projects run with, as `readConfig` makes them. */
export const EVOLUTION_SETTINGS = {
  kind: "evolution",
  url: EVOLUTION_URL,
  apiKey: EVOLUTION_API_KEY,
  publicUrl: PUBLIC_URL,
  mediaUrlSecret: MEDIA_URL_SECRET,
  timeoutMs: GATEWAY_TIMEOUT_MS,
  mediaTimeoutMs: GATEWAY_TIMEOUT_MS,
} as const;

/** Meta's Graph API as the `cloud-api` project reaches it (the default `CLOUD_API_BASE_URL`). */
export const CLOUD_API_BASE_URL = "https://graph.facebook.com";
/** The Meta app secret that signs the Cloud API's webhooks in the `cloud-api` project. */
export const CLOUD_API_APP_SECRET = "test-cloud-api-app-secret-0123456789abcdef";
/** The verify token of the Cloud API webhook handshake in the `cloud-api` project. */
export const CLOUD_API_VERIFY_TOKEN = "test-cloud-api-verify-token-0123456789abcdef";
/** The key that seals Cloud API access tokens in the `cloud-api` project (32 bytes, base64). */
export const CREDENTIALS_KEY = "dGVzdC1jcmVkZW50aWFscy1rZXktMDEyMzQ1Njc4OWE=";
