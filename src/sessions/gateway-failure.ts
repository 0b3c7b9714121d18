import { NOT_SUPPORTED } from "../gateways/cloud-api";
import { GatewayError } from "../gateways/gateway";
import { type Failure, fail } from "./result";

// A failed gateway call as the failure a session RPC answers (session-link.ts).

/**
 * 409 `not_supported_by_gateway` with `detail`; by default, why a QR code or pairing code cannot
 * be had: a Cloud API number is linked by its ids.
 */
export function notSupported(
  detail = "The session's gateway (cloud_api) links a business number by its ids: it has no QR code or pairing code.",
): Failure {
  return fail("not_supported_by_gateway", detail);
}

/**
 * A failed gateway call as the failure an RPC answers; anything but a GatewayError is rethrown.
 * A refusal of the credentials about one field (`GatewayError.field`) names it in `errors`.
 */
export function gatewayFailure(error: unknown): Failure {
  if (!(error instanceof GatewayError)) throw error;
  if (error.reason === "gateway_credentials_invalid") {
    const detail = `Meta refused the number's ids or access token (${error.message}).`;
    return fail("gateway_credentials_invalid", detail, error.field ? { [error.field]: [detail] } : undefined);
  }
  if (error.reason === NOT_SUPPORTED) return notSupported();
  return error.permanent
    ? fail("gateway_rejected", `The gateway refused the request (${error.message}).`)
    : fail("gateway_unavailable", `The gateway could not be reached (${error.message}). Try again later.`);
}
