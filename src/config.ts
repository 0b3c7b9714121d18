import { z } from "zod";
import { toMinor } from "./lib/money";

const seconds = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
const millis = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const price = (fallback: number) =>
  z.coerce.number().min(0.01).multipleOf(0.01).default(fallback).transform(toMinor);

/**
 * Runtime configuration from Worker variables (wrangler.toml `[vars]`, `.dev.vars`, `--var`).
 * Every variable is optional and has the default shown; the README's configuration table lists
 * them. A variable that is set to a bad value makes requests fail with a logged error rather than
 * run with a silent fallback.
 */
const ConfigSchema = z.object({
  /** Which gateway reaches the chat network. Only the embedded `sandbox` exists so far; WAHA and Evolution API come next. */
  CHATAPP_GATEWAY: z.enum(["sandbox"]).default("sandbox"),
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
  /** Price per message by type, in major units (2 decimals); stored as minor units. */
  PRICE_TEXT: price(0.01),
  PRICE_IMAGE: price(0.02),
  PRICE_VIDEO: price(0.03),
  PRICE_AUDIO: price(0.02),
  PRICE_DOCUMENT: price(0.02),
  /** OTP codes one app may send to one number per hour. */
  OTP_MAX_PER_NUMBER_PER_HOUR: z.coerce.number().int().min(1).default(5),
});

export type Config = z.output<typeof ConfigSchema>;

const cache = new WeakMap<object, Config>();

/** Parses (once per `env` object) the configuration. Throws on a malformed variable. */
export function readConfig(env: Env): Config {
  let config = cache.get(env);
  if (!config) {
    const parsed = ConfigSchema.safeParse(env);
    if (!parsed.success) throw new Error(`invalid configuration: ${z.prettifyError(parsed.error)}`);
    config = parsed.data;
    cache.set(env, config);
  }
  return config;
}
