import { ApiError, type ErrorCode, type FieldErrors } from "../errors";

/**
 * What a session object's RPC method returns. Errors cross the RPC boundary as plain values
 * (a thrown class loses its identity there); the route turns a failure into an {@link ApiError}.
 */
export type SessionResult<T> = { ok: true; value: T } | Failure;

/**
 * A failed {@link SessionResult}: an error code, a human-readable detail, the problem's
 * extension members, if any (errors.ts `ApiErrorOptions.extra`), and its per-field messages, if
 * any (`ApiErrorOptions.fields`, the problem's `errors`).
 */
export type Failure = {
  ok: false;
  code: ErrorCode;
  detail: string;
  extra?: ProblemMembers;
  fields?: FieldErrors;
};

/**
 * Extension members of a problem as they cross the RPC boundary: plain values (a member typed
 * `unknown` would make the RPC result's type unusable).
 */
export type ProblemMembers = Record<string, string | number | boolean | null>;

export function ok<T>(value: T): SessionResult<T> {
  return { ok: true, value };
}

export function fail(code: ErrorCode, detail: string, fields?: FieldErrors): Failure {
  return fields ? { ok: false, code, detail, fields } : { ok: false, code, detail };
}

/** An {@link ApiError} as a failure that can cross the RPC boundary (its headers are not kept). */
export function failWith(error: ApiError): Failure {
  // The members errors.ts builds are plain values (accountLimitReached: names and counts).
  return { ok: false, code: error.code, detail: error.detail, extra: error.options.extra as ProblemMembers };
}

/** The value of a successful result; throws the failure as an {@link ApiError}. */
export function unwrap<T>(result: SessionResult<T>): T {
  if (!result.ok)
    throw new ApiError(result.code, result.detail, { extra: result.extra, fields: result.fields });
  return result.value;
}
