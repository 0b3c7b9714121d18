import { z } from "zod";
import { GATEWAY_NAMES, type GatewayKind } from "./lib/gateway-kinds";
import { toMinor } from "./lib/money";

const seconds = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const millis = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const price = (fallback: number) =>
  z.coerce.number().min(0.01).multipleOf(0.01).default(fallback).transform(toMinor);
/** An http(s) origin or base URL; a trailing slash is dropped. */
const BaseUrl = z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, ""));
/** A gateway setting: only the chosen gateway's settings are checked (see {@link readConfig}). */
const setting = z.string().optional();

export { GATEWAY_NAMES, type GatewayKind };

/** The gateway `CHATAPP_GATEWAY` names when unset. */
export const DEFAULT_GATEWAY: GatewayKind = "sandbox";

/**
 * Runtime configuration from Worker variables (wrangler.toml `[vars]`, `.dev.vars`, `--var`,
 * secrets). Every variable is optional and has the default shown; the table of
 * docs/configuration.md, Overview lists them. A variable set to a bad value fails requests with a problem
 * naming it ({@link ConfigError}) rather than running with a silent fallback.
 */
const ConfigSchema = z.object({
  /**
   * Which gateway reaches the chat network by default: the embedded `sandbox`, `waha`,
   * `evolution` or `cloud_api` (Meta's WhatsApp Cloud API).
   */
  CHATAPP_GATEWAY: z.enum(GATEWAY_NAMES).default(DEFAULT_GATEWAY),
  /**
   * The gateways a session may choose (`POST /v1/chatapp/sessions` `gateway`), comma-separated;
   * default: `CHATAPP_GATEWAY` alone, which it must include. Each needs its settings as
   * `CHATAPP_GATEWAY` would.
   */
  CHATAPP_GATEWAYS: z
    .string()
    .optional()
    .transform((value) =>
      value === undefined ? undefined : [...new Set(value.split(",").map((name) => name.trim()))],
    )
    .pipe(z.array(z.enum(GATEWAY_NAMES)).min(1).optional()),
  /** The service's public origin; real gateways post their events to `<PUBLIC_URL>/gateway/…`. */
  PUBLIC_URL: setting,
  /**
   * WAHA: base URL of the WAHA server, its API key (`X-Api-Key`) and the webhook HMAC key (at
   * least {@link MIN_GATEWAY_SECRET_LENGTH} characters).
   */
  WAHA_URL: setting,
  WAHA_API_KEY: setting,
  WAHA_WEBHOOK_HMAC_KEY: setting,
  /**
   * Evolution API: base URL of the server and its global API key (`apikey`, at least
   * {@link MIN_GATEWAY_SECRET_LENGTH} characters).
   */
  EVOLUTION_URL: setting,
  EVOLUTION_API_KEY: setting,
  /**
   * WhatsApp Cloud API: the Graph API's base URL and version (`https://graph.facebook.com`,
   * `v23.0`), the Meta app's secret (it signs Meta's webhooks, `X-Hub-Signature-256`) and the
   * verify token of the webhook subscription handshake (`hub.verify_token`), each at least
   * {@link MIN_GATEWAY_SECRET_LENGTH} characters.
   */
  CLOUD_API_BASE_URL: setting,
  CLOUD_API_VERSION: setting,
  CLOUD_API_APP_SECRET: setting,
  CLOUD_API_VERIFY_TOKEN: setting,
  /**
   * WhatsApp Cloud API: the AES-256-GCM key that seals each session's access token at rest
   * (lib/sealed-secret.ts), 32 bytes as standard base64 (`openssl rand -base64 32`).
   */
  CREDENTIALS_KEY: setting,
  /**
   * WhatsApp Cloud API: seconds a send whose answer was lost waits for the status webhook that
   * names it (`biz_opaque_callback_data`) before it counts as not sent and is sent again: the
   * Graph API has no way to look a sent message up.
   */
  CLOUD_API_SETTLE_SECONDS: seconds(900),
  /**
   * Real gateways: the HMAC key of the signed media links they fetch media through
   * (src/media/link.ts; docs/security.md, Media). At least {@link MIN_MEDIA_URL_SECRET_LENGTH}
   * characters.
   */
  MEDIA_URL_SECRET: setting,
  /** Milliseconds a gateway call may take before it counts as a transient failure. */
  GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * Milliseconds a media send may take: gateways may download and convert the file first (WAHA's
   * `convert: true` for voice notes and videos).
   */
  GATEWAY_MEDIA_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** Seconds a send whose outcome is unknown waits before the gateway is asked whether it holds it. */
  OUTCOME_GRACE_SECONDS: seconds(30),
  /** Hours the session keeps asking about an unknown outcome before it fails `outcome_unknown`. */
  OUTCOME_SETTLE_HOURS: z.coerce.number().int().min(1).max(168).default(24),
  /** Seconds between checks of a connected session against the gateway's own view. */
  GATEWAY_CHECK_SECONDS: seconds(60),
  /**
   * Days the media of an incoming message stays kept in R2 (docs/messages.md, Incoming media); the hourly
   * sweep deletes older ones. Also the longest a send's (or draft campaign's) stored copy of its
   * outgoing media outlives the messages' time (docs/security.md, Media).
   */
  MEDIA_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Days a final message stays in D1 before the hourly job archives it to R2, for accounts whose
   * own `message_retention_days` is not set (docs/retention.md, Archives). 0 archives a message as soon
   * as it is final.
   */
  MESSAGE_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(90),
  /** Seconds between QR rotations of a pending session. */
  QR_ROTATE_SECONDS: seconds(20),
  /** Seconds a session may stay pending without a scan before it fails with `qr_timeout`. */
  QR_TIMEOUT_SECONDS: seconds(180),
  /** Seconds a queued message may wait for its session to be connected before it fails. */
  MESSAGE_TTL_SECONDS: seconds(86_400),
  /** Sandbox only: milliseconds from sent to the `delivered` ack. */
  SANDBOX_DELIVERED_MS: millis(1_000),
  /** Sandbox only: milliseconds from sent to the `read` ack. */
  SANDBOX_READ_MS: millis(3_000),
  /**
   * Sandbox only: `"true"` shows one-time codes in clear in `GET /sandbox/sessions/{id}/received`
   * (local development, so the walkthrough can read a code); `"false"` (the default) masks them
   * there as the API masks them everywhere (docs/security.md, Hardening).
   */
  SANDBOX_SHOW_CODES: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** Price per message by type, in major units (2 decimals); stored as minor units. */
  PRICE_TEXT: price(0.01),
  PRICE_IMAGE: price(0.02),
  PRICE_VIDEO: price(0.03),
  PRICE_AUDIO: price(0.02),
  PRICE_DOCUMENT: price(0.02),
  /** A Cloud API session's message template (docs/gateways.md, Message templates). */
  PRICE_TEMPLATE: price(0.01),
  /** A location message (docs/messages.md, Sending messages → Locations). */
  PRICE_LOCATION: price(0.01),
  /**
   * An interactive message: reply buttons or a list (docs/messages.md, Sending messages → Buttons and lists).
   */
  PRICE_INTERACTIVE: price(0.01),
  /** A message of contact cards (docs/messages.md, Sending messages → Contact cards). */
  PRICE_CONTACTS: price(0.01),
  /** A sticker (docs/messages.md, Sending messages → Stickers). */
  PRICE_STICKER: price(0.01),
  /** A poll (docs/messages.md, Sending messages → Polls). */
  PRICE_POLL: price(0.01),
  /**
   * OTP codes all the apps of one account together may send to one number in a rolling hour
   * (sends and resends; docs/otp.md, Sending and verifying).
   */
  OTP_MAX_PER_NUMBER_PER_HOUR: z.coerce.number().int().min(1).default(5),
  /**
   * `"true"` lets webhook endpoints be `http://localhost[:port]` or `http://127.0.0.1[:port]`
   * (a receiver on the developer's machine under `wrangler dev`); `"false"` (the default) holds
   * them to the public https rule of lib/media-url.ts.
   */
  WEBHOOK_ALLOW_HTTP_LOCALHOST: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /**
   * `"true"` lets a message's `media_url` (sends, campaigns, the sandbox's inbound messages) be
   * `http(s)://localhost[:port]` or `http(s)://127.0.0.1[:port]` (a file server on the developer's
   * machine under `wrangler dev`), fetched as any media is but for that exception
   * (lib/media-url.ts `mediaUrlProblem`); `"false"` (the default) holds them to the public https
   * rule on port 443 (docs/security.md, Media).
   */
  MEDIA_ALLOW_HTTP_LOCALHOST: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
});

type RawConfig = z.output<typeof ConfigSchema>;

/** How to reach the configured gateway; real gateways need every setting named here. */
export type GatewaySettings =
  | { kind: "sandbox" }
  | {
      kind: "waha";
      url: string;
      apiKey: string;
      hmacKey: string;
      publicUrl: string;
      mediaUrlSecret: string;
      timeoutMs: number;
      mediaTimeoutMs: number;
    }
  | {
      kind: "evolution";
      url: string;
      apiKey: string;
      publicUrl: string;
      mediaUrlSecret: string;
      timeoutMs: number;
      mediaTimeoutMs: number;
    }
  | CloudApiSettings;

/**
 * How to reach Meta's WhatsApp Cloud API: `baseUrl` without a trailing slash, `version` as
 * `v<major>.<minor>`, the app secret and verify token of its webhooks, the key that seals access
 * tokens (32 raw bytes as base64), and how long a lost answer waits for its status webhook
 * (`settleSeconds`).
 */
export interface CloudApiSettings {
  kind: "cloud_api";
  baseUrl: string;
  version: string;
  appSecret: string;
  verifyToken: string;
  credentialsKey: string;
  settleSeconds: number;
  publicUrl: string;
  mediaUrlSecret: string;
  timeoutMs: number;
  mediaTimeoutMs: number;
}

/**
 * The configuration: every variable but the gateway settings, which are in `gateway` (the
 * default gateway, `CHATAPP_GATEWAY`) and `gateways` (each enabled one, `CHATAPP_GATEWAYS`, the
 * default included); `CHATAPP_GATEWAYS` as the list of enabled names; `mediaUrlSecret`:
 * `MEDIA_URL_SECRET` when a real gateway is enabled, else null (no signed media links exist);
 * `publicUrl`: `PUBLIC_URL` without a trailing slash, or null when unset (links made by the API
 * then point at the request's origin).
 */
export type Config = Omit<RawConfig, keyof typeof GATEWAY_SETTINGS | "CHATAPP_GATEWAYS"> & {
  CHATAPP_GATEWAYS: GatewayKind[];
  gateway: GatewaySettings;
  gateways: Partial<SettingsByKind>;
  mediaUrlSecret: string | null;
  publicUrl: string | null;
};

/** The settings of gateway `K` (`{ kind: K, ... }`). */
export type SettingsOf<K extends GatewayKind> = SettingsByKind[K];

/** Each gateway's settings type, by name. */
type SettingsByKind = { [K in GatewayKind]: Extract<GatewaySettings, { kind: K }> };

/** The settings of the enabled gateway `name`, or null when the deployment does not enable it. */
export function gatewaySettingsOf<K extends GatewayKind>(config: Config, name: K): SettingsOf<K> | null {
  return config.gateways[name] ?? null;
}

const GATEWAY_SETTINGS = {
  PUBLIC_URL: true,
  WAHA_URL: true,
  WAHA_API_KEY: true,
  WAHA_WEBHOOK_HMAC_KEY: true,
  EVOLUTION_URL: true,
  EVOLUTION_API_KEY: true,
  CLOUD_API_BASE_URL: true,
  CLOUD_API_VERSION: true,
  CLOUD_API_APP_SECRET: true,
  CLOUD_API_VERIFY_TOKEN: true,
  CREDENTIALS_KEY: true,
  MEDIA_URL_SECRET: true,
} as const;

/** Variables that configure the gateway: a problem with one is `gateway_misconfigured`. */
const GATEWAY_VARIABLES = new Set([
  "CHATAPP_GATEWAY",
  "CHATAPP_GATEWAYS",
  "PUBLIC_URL",
  "WAHA_URL",
  "WAHA_API_KEY",
  "WAHA_WEBHOOK_HMAC_KEY",
  "EVOLUTION_URL",
  "EVOLUTION_API_KEY",
  "CLOUD_API_BASE_URL",
  "CLOUD_API_VERSION",
  "CLOUD_API_APP_SECRET",
  "CLOUD_API_VERIFY_TOKEN",
  "CREDENTIALS_KEY",
  "CLOUD_API_SETTLE_SECONDS",
  "MEDIA_URL_SECRET",
  "GATEWAY_TIMEOUT_MS",
  "GATEWAY_MEDIA_TIMEOUT_MS",
  "GATEWAY_CHECK_SECONDS",
]);

/**
 * The D1 bindings that hold accounts: `DB_ACCOUNTS_<n>`, n = 0, 1, … (wrangler.toml; docs/databases.md,
 * Databases). `DB` is the directory.
 */
export const ACCOUNT_DATABASE_BINDING = /^DB_ACCOUNTS_(\d+)$/;

/**
 * A variable that is missing or malformed, or settings that do not fit the deployment:
 * `variable` names it (or them), the message says `<variable> <problem>`. `gateway` when it
 * configures the gateway (rendered `gateway_misconfigured`, else `service_misconfigured`);
 * `status` is the HTTP status it is answered with: 500, or 503 for a local-development setting
 * in a deployment that is not local ({@link localSettingsProblem}).
 */
export class ConfigError extends Error {
  readonly gateway: boolean;

  constructor(
    readonly variable: string,
    problem: string,
    readonly status: 500 | 503 = 500,
  ) {
    super(`${variable} ${problem}`);
    this.name = "ConfigError";
    this.gateway = GATEWAY_VARIABLES.has(variable);
  }
}

/**
 * The settings that exist for local development only: each lets the service reach
 * `localhost`/`127.0.0.1` over http, which a deployment that others can call must never do
 * (OWASP Server-Side Request Forgery Prevention Cheat Sheet).
 */
export const LOCAL_DEVELOPMENT_SETTINGS = [
  "MEDIA_ALLOW_HTTP_LOCALHOST",
  "WEBHOOK_ALLOW_HTTP_LOCALHOST",
] as const;

/** The host names that count as the developer's own machine, as a URL parser gives them. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1"]);

/**
 * Why the deployment must refuse to run with {@link LOCAL_DEVELOPMENT_SETTINGS} set `true`, or
 * null when none is or the deployment is local. What says where the deployment runs is
 * `PUBLIC_URL` when it is set (the origin the service says it has, and the only one a queue
 * batch, a cron run or a Durable Object alarm knows), else `requestUrl`, the URL of the request
 * being served (on workers.dev or a custom domain its host is that name; under `wrangler dev`
 * it is `localhost` or `127.0.0.1`). Local means the host is exactly `localhost` or `127.0.0.1`;
 * with neither `PUBLIC_URL` nor a request there is nothing to judge, and null is returned.
 *
 * @param config the parsed settings ({@link readConfig}, or its raw values while it runs).
 * @param requestUrl an absolute URL, or null outside a request.
 * @returns a 503 {@link ConfigError} (`service_misconfigured`) naming the settings that are true
 *   and the host, e.g. `WEBHOOK_ALLOW_HTTP_LOCALHOST is true, which is for local development only;
 *   PUBLIC_URL https://api.example.com is not localhost or 127.0.0.1`.
 */
export function localSettingsProblem(
  config: Pick<Config, (typeof LOCAL_DEVELOPMENT_SETTINGS)[number] | "publicUrl">,
  requestUrl: string | null,
): ConfigError | null {
  const on = LOCAL_DEVELOPMENT_SETTINGS.filter((name) => config[name]);
  if (on.length === 0) return null;
  let where: string;
  if (config.publicUrl !== null) {
    if (LOCAL_HOSTS.has(new URL(config.publicUrl).hostname)) return null;
    where = `PUBLIC_URL ${config.publicUrl} is`;
  } else if (requestUrl !== null) {
    const host = new URL(requestUrl).hostname;
    if (LOCAL_HOSTS.has(host)) return null;
    where = `PUBLIC_URL is unset and this request's host ${host} is`;
  } else {
    return null;
  }
  return new ConfigError(
    on.join(" and "),
    `${on.length === 1 ? "is" : "are"} true, which is for local development only; ${where} not localhost or 127.0.0.1`,
    503,
  );
}

/**
 * Shortest accepted gateway secret, in characters: `MEDIA_URL_SECRET`, `CLOUD_API_APP_SECRET`,
 * `CLOUD_API_VERIFY_TOKEN`, `WAHA_WEBHOOK_HMAC_KEY` and `EVOLUTION_API_KEY` (docs/configuration.md,
 * Overview). A key shorter than the hash's output weakens HMAC (RFC 2104 §3), and 32 random
 * characters carry well over 128 bits, as {@link MIN_ADMIN_TOKEN_LENGTH} says. Each of them lets
 * whoever knows it write gateway events (the WAHA key signs them; Evolution's instance tokens are
 * HMACs under its key, docs/security.md, "Gateway events"; the verify token subscribes Meta's webhooks), so
 * none may be guessable.
 */
export const MIN_GATEWAY_SECRET_LENGTH = 32;

/** Shortest accepted `MEDIA_URL_SECRET`, in characters ({@link MIN_GATEWAY_SECRET_LENGTH}). */
export const MIN_MEDIA_URL_SECRET_LENGTH = MIN_GATEWAY_SECRET_LENGTH;

/** The Graph API's origin (Meta, "Graph API → Overview"). */
const DEFAULT_CLOUD_API_BASE_URL = "https://graph.facebook.com";
/** The Graph API version whose OpenAPI document the gateway follows (facebook/openapi, v23.0). */
const DEFAULT_CLOUD_API_VERSION = "v23.0";

/** `CLOUD_API_VERSION` as the document's `Version` path parameter allows: `^v[0-9]+\.[0-9]+$`. */
function graphVersion(value: string): string {
  if (!/^v[0-9]+\.[0-9]+$/.test(value))
    throw new ConfigError("CLOUD_API_VERSION", "is invalid: not like v23.0");
  return value;
}

/** `CREDENTIALS_KEY` when it is standard base64 of exactly 32 bytes (an AES-256 key). */
function credentialsKey(value: string): string {
  let bytes: number;
  try {
    bytes = atob(value).length;
  } catch {
    bytes = -1;
  }
  if (bytes !== 32) throw new ConfigError("CREDENTIALS_KEY", "is invalid: not 32 bytes as base64");
  return value;
}

const cache = new WeakMap<object, Config>();

/**
 * Parses (once per `env` object) the configuration. Empty strings count as unset.
 * @throws ConfigError (503) when a local-development setting is true and `PUBLIC_URL` is not
 *   local ({@link localSettingsProblem}), checked after every variable parsed.
 * @throws ConfigError for the first variable that is malformed (a gateway secret shorter than
 *   {@link MIN_GATEWAY_SECRET_LENGTH} characters included), `CHATAPP_GATEWAYS` when it leaves
 *   out `CHATAPP_GATEWAY`, or a variable that an enabled gateway needs and is missing (WAHA: `WAHA_URL`, `WAHA_API_KEY`, `WAHA_WEBHOOK_HMAC_KEY`, `PUBLIC_URL`,
 *   `MEDIA_URL_SECRET`; Evolution API: `EVOLUTION_URL`, `EVOLUTION_API_KEY`, `PUBLIC_URL`,
 *   `MEDIA_URL_SECRET`; WhatsApp Cloud API: `CLOUD_API_APP_SECRET`, `CLOUD_API_VERIFY_TOKEN`,
 *   `CREDENTIALS_KEY`, `PUBLIC_URL`, `MEDIA_URL_SECRET`).
 */
export function readConfig(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  if (!Object.keys(env).some((name) => ACCOUNT_DATABASE_BINDING.test(name)))
    throw new ConfigError(
      "DB_ACCOUNTS_0",
      "is missing: wrangler.toml must list at least one account database (docs/databases.md, Databases)",
    );
  const vars = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== "" && typeof value !== "object"),
  );
  const parsed = ConfigSchema.safeParse(vars);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? "configuration"), `is invalid: ${issue?.message}`);
  }
  const {
    PUBLIC_URL,
    WAHA_URL,
    WAHA_API_KEY,
    WAHA_WEBHOOK_HMAC_KEY,
    EVOLUTION_URL,
    EVOLUTION_API_KEY,
    CLOUD_API_BASE_URL,
    CLOUD_API_VERSION,
    CLOUD_API_APP_SECRET,
    CLOUD_API_VERIFY_TOKEN,
    CREDENTIALS_KEY,
    MEDIA_URL_SECRET,
    CHATAPP_GATEWAYS,
    ...raw
  } = parsed.data;
  const enabled = CHATAPP_GATEWAYS ?? [raw.CHATAPP_GATEWAY];
  if (!enabled.includes(raw.CHATAPP_GATEWAY)) {
    throw new ConfigError(
      "CHATAPP_GATEWAYS",
      `is invalid: it must include CHATAPP_GATEWAY (${raw.CHATAPP_GATEWAY})`,
    );
  }
  const timeoutMs = raw.GATEWAY_TIMEOUT_MS;
  const mediaTimeoutMs = raw.GATEWAY_MEDIA_TIMEOUT_MS;
  /** The settings of gateway `kind`; a missing one names what enabled the gateway. */
  const settingsOf = <K extends GatewayKind>(kind: K): SettingsOf<K> => {
    const need = (variable: string, value: string | undefined): string => {
      if (value === undefined) {
        const why =
          kind === raw.CHATAPP_GATEWAY ? `CHATAPP_GATEWAY is ${kind}` : `CHATAPP_GATEWAYS enables ${kind}`;
        throw new ConfigError(variable, `is required when ${why}`);
      }
      return value;
    };
    const url = (variable: string, value: string | undefined): string => {
      const parsedUrl = BaseUrl.safeParse(need(variable, value));
      if (!parsedUrl.success) throw new ConfigError(variable, "is invalid: not an http(s) URL");
      return parsedUrl.data;
    };
    const secret = (variable: string, value: string | undefined): string => {
      const given = need(variable, value);
      if (given.length < MIN_GATEWAY_SECRET_LENGTH)
        throw new ConfigError(variable, `is invalid: at least ${MIN_GATEWAY_SECRET_LENGTH} characters`);
      return given;
    };
    // One reader per gateway, by name: only the gateways enabled are read.
    const readers: { [K in GatewayKind]: () => SettingsOf<K> } = {
      sandbox: () => ({ kind: "sandbox" }),
      waha: () => ({
        kind: "waha",
        url: url("WAHA_URL", WAHA_URL),
        apiKey: need("WAHA_API_KEY", WAHA_API_KEY),
        hmacKey: secret("WAHA_WEBHOOK_HMAC_KEY", WAHA_WEBHOOK_HMAC_KEY),
        publicUrl: url("PUBLIC_URL", PUBLIC_URL),
        mediaUrlSecret: secret("MEDIA_URL_SECRET", MEDIA_URL_SECRET),
        timeoutMs,
        mediaTimeoutMs,
      }),
      evolution: () => ({
        kind: "evolution",
        url: url("EVOLUTION_URL", EVOLUTION_URL),
        apiKey: secret("EVOLUTION_API_KEY", EVOLUTION_API_KEY),
        publicUrl: url("PUBLIC_URL", PUBLIC_URL),
        mediaUrlSecret: secret("MEDIA_URL_SECRET", MEDIA_URL_SECRET),
        timeoutMs,
        mediaTimeoutMs,
      }),
      cloud_api: () => ({
        kind: "cloud_api",
        baseUrl: url("CLOUD_API_BASE_URL", CLOUD_API_BASE_URL ?? DEFAULT_CLOUD_API_BASE_URL),
        version: graphVersion(CLOUD_API_VERSION ?? DEFAULT_CLOUD_API_VERSION),
        appSecret: secret("CLOUD_API_APP_SECRET", CLOUD_API_APP_SECRET),
        verifyToken: secret("CLOUD_API_VERIFY_TOKEN", CLOUD_API_VERIFY_TOKEN),
        credentialsKey: credentialsKey(need("CREDENTIALS_KEY", CREDENTIALS_KEY)),
        settleSeconds: raw.CLOUD_API_SETTLE_SECONDS,
        publicUrl: url("PUBLIC_URL", PUBLIC_URL),
        mediaUrlSecret: secret("MEDIA_URL_SECRET", MEDIA_URL_SECRET),
        timeoutMs,
        mediaTimeoutMs,
      }),
    };
    return readers[kind]();
  };
  // The default first, so that its problems are reported as before.
  const gateway = settingsOf(raw.CHATAPP_GATEWAY);
  const gateways: Config["gateways"] = {};
  const enable = <K extends GatewayKind>(kind: K, settings?: SettingsOf<K>) => {
    gateways[kind] ??= settings ?? settingsOf(kind);
  };
  enable(raw.CHATAPP_GATEWAY, gateway);
  for (const kind of enabled) enable(kind);
  let mediaUrlSecret: string | null = null;
  for (const settings of Object.values(gateways)) {
    if ("mediaUrlSecret" in settings) mediaUrlSecret = settings.mediaUrlSecret;
  }
  let publicUrl: string | null = null;
  if (PUBLIC_URL !== undefined) {
    const parsedUrl = BaseUrl.safeParse(PUBLIC_URL);
    if (!parsedUrl.success) throw new ConfigError("PUBLIC_URL", "is invalid: not an http(s) URL");
    publicUrl = parsedUrl.data;
  }
  // Outside a request only PUBLIC_URL can tell; the request's own host is judged by
  // src/middleware/local-settings.ts.
  const refusal = localSettingsProblem({ ...raw, publicUrl }, null);
  if (refusal) throw refusal;
  const config = { ...raw, CHATAPP_GATEWAYS: enabled, gateway, gateways, mediaUrlSecret, publicUrl };
  cache.set(env, config);
  return config;
}

/**
 * Shortest accepted `ADMIN_TOKEN`, in characters. The token opens every account (creating them,
 * issuing their keys, crediting them), so it must be out of reach of guessing: 32 random
 * characters hold 128 bits even as hex digits, above the 112-bit least security strength of NIST
 * SP 800-131A, and more as base64 (`openssl rand -base64 32` gives 44). A short or memorable
 * token, like the `dev-admin-token` this service once shipped, is the first an attacker tries; the
 * `admin` rate limit slows guessing but cannot make a weak token strong.
 */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/**
 * The `ADMIN_TOKEN` secret, or null when it is unset (or empty): the admin API then does not exist.
 * Only the admin routes read it, so a bad token takes down the admin API and nothing else
 * (`GET /health` still answers 200).
 * @throws ConfigError when it is shorter than {@link MIN_ADMIN_TOKEN_LENGTH}: the admin routes answer
 *   500 `service_misconfigured` naming it, whatever token a request brings.
 */
export function readAdminToken(env: Env): string | null {
  const token = env.ADMIN_TOKEN;
  if (!token) return null;
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError("ADMIN_TOKEN", `is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }
  return token;
}
