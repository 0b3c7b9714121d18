import { z } from "zod";
import { GatewayError } from "../gateway";

/*
 * Reading Evolution API's error answers, which both the lifecycle calls (link.ts) and sends
 * (send.ts) classify by their text. Evolution renders errors as `{ status, error, response:
 * { message } }` (src/main.ts in EvolutionAPI/evolution-api).
 */

/**
 * Evolution's error body (src/main.ts of EvolutionAPI/evolution-api): `{ status, error, response:
 * { message: [...] } }`.
 */
const ErrorBody = z.object({ response: z.object({ message: z.array(z.unknown()) }) });

/**
 * `response.message` of the error body a {@link GatewayError} carries (strings, or objects such
 * as `{ exists: false, jid, number }`), or none for another error or body.
 */
export function errorMessages(error: unknown): unknown[] {
  if (!(error instanceof GatewayError)) return [];
  const parsed = ErrorBody.safeParse(error.body);
  return parsed.success ? parsed.data.response.message : [];
}

/** The HTTP status of a {@link GatewayError} that has one, else null. */
export function statusOf(error: unknown): number | null {
  return error instanceof GatewayError ? error.status : null;
}
