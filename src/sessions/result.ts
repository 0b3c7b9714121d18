import { ApiError, type ErrorCode } from "../errors";

/**
 * What a session object's RPC method returns. Errors cross the RPC boundary as plain values
 * (a thrown class loses its identity there); the route turns a failure into an {@link ApiError}.
 */
export type SessionResult<T> = { ok: true; value: T } | Failure;

/** A failed {@link SessionResult}: an error code and a human-readable detail. */
export type Failure = { ok: false; code: ErrorCode; detail: string };

export function ok<T>(value: T): SessionResult<T> {
  return { ok: true, value };
}

export function fail(code: ErrorCode, detail: string): Failure {
  return { ok: false, code, detail };
}

/** The value of a successful result; throws the failure as an {@link ApiError}. */
export function unwrap<T>(result: SessionResult<T>): T {
  if (!result.ok) throw new ApiError(result.code, result.detail);
  return result.value;
}
