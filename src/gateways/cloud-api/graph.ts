import { z } from "zod";
import type { CloudApiSettings } from "../../config";
import { openSecret } from "../../lib/sealed-secret";
import { GatewayError } from "../gateway";
import type { GatewayHttp } from "../http";

/*
 * Reaching Meta's Graph API for one business number, and reading its errors. Schema names are of
 * Meta's OpenAPI document (facebook/openapi, business-messaging-api_v23.0.yaml); the error codes
 * are those of Meta's "Error codes" page for the WhatsApp Cloud API.
 */

/**
 * The business number a Cloud API session sends from: Meta's `phoneNumberId` (Phone-Number-ID)
 * and `wabaId` (WABA-ID), the access token sealed under `CREDENTIALS_KEY` bound to the session's
 * row id `sessionRowId` (lib/sealed-secret.ts), and the messages per second it may send.
 */
export interface CloudApiNumber {
  sessionRowId: string;
  phoneNumberId: string;
  wabaId: string;
  accessTokenSealed: string;
  throughputMps: number;
}

/**
 * How to call the Graph API as `number`: `https://graph.facebook.com/v23.0` as base, the access
 * token (opened here, held only for the call) as `Authorization: Bearer`.
 * @throws Error when the sealed token does not open (another `CREDENTIALS_KEY`).
 */
export async function graphHttp(settings: CloudApiSettings, number: CloudApiNumber): Promise<GatewayHttp> {
  const token = await openSecret(settings.credentialsKey, number.sessionRowId, number.accessTokenSealed);
  return {
    baseUrl: `${settings.baseUrl}/${settings.version}`,
    headers: { Authorization: `Bearer ${token}` },
    timeoutMs: settings.timeoutMs,
    mediaTimeoutMs: settings.mediaTimeoutMs,
  };
}

/**
 * A Graph API error as the document's `GraphAPIError` / `ErrorResponse` give it (`error: { message,
 * type, code, error_subcode?, error_data?: { details } }`); the rest is let through.
 */
const GraphErrorBody = z.looseObject({
  error: z.looseObject({
    message: z.string(),
    code: z.number().int(),
    error_subcode: z.number().int().optional(),
    error_data: z.looseObject({ details: z.string().optional() }).optional(),
  }),
});

/** Meta's error of a failed call: its `code`, `message` and `error_data.details` when given. */
export interface GraphError {
  code: number;
  message: string;
  details: string | null;
}

/** The Graph API error a {@link GatewayError} carries in its body, or null for any other failure. */
export function graphErrorOf(error: unknown): GraphError | null {
  if (!(error instanceof GatewayError)) return null;
  const parsed = GraphErrorBody.safeParse(error.body);
  if (!parsed.success) return null;
  const { code, message, error_data } = parsed.data.error;
  return { code, message, details: error_data?.details ?? null };
}

/**
 * The reason of a call a Cloud API number has no counterpart for: a QR code or pairing code
 * (index.ts), a message type with no request (send.ts `messageBody`).
 */
export const NOT_SUPPORTED = "not_supported_by_gateway";

/**
 * Meta's code for an access token that is invalid, expired or revoked (OAuthException 190,
 * "Error codes → Authorization errors"): the session cannot send until it is given a new one.
 */
export const TOKEN_INVALID_CODE = 190;

/** The session's reason once Meta refuses its access token ({@link TOKEN_INVALID_CODE}). */
export const TOKEN_INVALID = "token_invalid";
