import { ApiError } from "../errors";
import { type MediaUrlOptions, mediaUrlProblem } from "../lib/media-url";
import { contentTypeEssence, MAX_MEDIA_REDIRECTS, MEDIA_RULES, type MediaType } from "./rules";

/**
 * Why a `media_url` was refused: the `reason` member of a `media_unavailable` problem.
 * - `unreachable`: the host could not be reached, or did not answer in time;
 * - `http_error`: it answered something other than 200 (or 203), or a redirect without `Location`;
 * - `redirect_refused`: a redirect to another host, another port or scheme, or too many;
 * - `too_large`: over the type's size cap ({@link MEDIA_RULES});
 * - `wrong_type`: a content type the message type does not take;
 * - `empty`: a body of no bytes;
 * - `not_a_sticker`: a sticker that is not a 512×512 WebP within its size (src/media/sticker.ts).
 */
export const MEDIA_PROBLEM_REASONS = [
  "unreachable",
  "http_error",
  "redirect_refused",
  "too_large",
  "wrong_type",
  "empty",
  "not_a_sticker",
] as const;
export type MediaProblemReason = (typeof MEDIA_PROBLEM_REASONS)[number];

/** The 422 `media_unavailable` problem for `reason`, its detail saying what was wrong. */
export function mediaUnavailable(reason: MediaProblemReason, detail: string): ApiError {
  return new ApiError("media_unavailable", `The media at media_url cannot be sent: ${detail}`, {
    extra: { reason },
  });
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Refuses a `media_url` outside the rule of this deployment (lib/media-url.ts `mediaUrlProblem`
 * with `options`: `{ allowLocalhost: MEDIA_ALLOW_HTTP_LOCALHOST }`) as the request schemas refuse
 * any other: 422 `validation_failed` with the problem on `media_url`. The schemas take the
 * localhost exception (they cannot read the configuration), so a handler calls this first, and
 * {@link openMedia} again before it fetches. Null or undefined (no media) passes.
 * @throws ApiError `validation_failed` (422), e.g. `{ media_url: ["must use https"] }`.
 */
export function requireMediaUrlAllowed(url: string | null | undefined, options: MediaUrlOptions): void {
  if (url == null) return;
  const problem = mediaUrlProblem(url, options);
  if (problem)
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { media_url: [problem] },
    });
}

/** A media response whose status, content type and declared length passed; its body is unread. */
export interface OpenedMedia {
  response: Response;
  /** The content type's essence, one of the type's ({@link MEDIA_RULES}). */
  contentType: string;
}

/**
 * Requests `url` (a `media_url` that passes `mediaUrlProblem` with `options`, checked again here)
 * from the Worker, which reaches only the public internet, never the operator's network; with
 * `options.allowLocalhost` (`MEDIA_ALLOW_HTTP_LOCALHOST`, local development) also
 * `http(s)://localhost` and `http(s)://127.0.0.1` on any port, and nothing else. Redirects are
 * not followed by `fetch` (`redirect: "manual"`): at most {@link MAX_MEDIA_REDIRECTS} are, and
 * only to a URL of the same rule (https on port 443, or that local exception) on the same host
 * name, so a public host cannot send the fetch elsewhere (not to localhost either). The answer
 * must be 200 (or 203) with a content type that `type` takes, and a `Content-Length`, when given,
 * within its cap; the body is left for the caller to read under the same cap, since a declared
 * length may lie (src/media/store.ts).
 *
 * @param signal aborts the request (the fetch's deadline).
 * @throws ApiError `validation_failed` (422, on `media_url`) for a `url` outside the rule
 *   ({@link requireMediaUrlAllowed}); `media_unavailable` (422) with a {@link MediaProblemReason}.
 */
export async function openMedia(
  url: string,
  type: MediaType,
  signal: AbortSignal,
  options: MediaUrlOptions = {},
): Promise<OpenedMedia> {
  requireMediaUrlAllowed(url, options);
  const rule = MEDIA_RULES[type];
  const origin = new URL(url);
  let current = origin;
  for (let redirects = 0; ; redirects++) {
    let response: Response;
    try {
      response = await fetch(current, {
        redirect: "manual",
        signal,
        headers: { Accept: rule.contentTypes.join(", ") },
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      throw mediaUnavailable(
        "unreachable",
        timedOut ? `${current.host} did not answer in time.` : `${current.host} could not be reached.`,
      );
    }
    if (REDIRECT_STATUSES.has(response.status)) {
      await response.body?.cancel();
      const location = response.headers.get("Location");
      if (!location)
        throw mediaUnavailable(
          "http_error",
          `${current.host} answered ${response.status} without a Location.`,
        );
      if (redirects >= MAX_MEDIA_REDIRECTS)
        throw mediaUnavailable("redirect_refused", `more than ${MAX_MEDIA_REDIRECTS} redirects.`);
      const next = resolve(location, current);
      if (!next) throw mediaUnavailable("redirect_refused", "a redirect's Location is not a URL.");
      const problem = redirectProblem(next, origin, options);
      if (problem) throw mediaUnavailable("redirect_refused", `a redirect ${problem}.`);
      current = next;
      continue;
    }
    if (response.status !== 200 && response.status !== 203) {
      await response.body?.cancel();
      throw mediaUnavailable("http_error", `${current.host} answered ${response.status}.`);
    }
    const contentType = contentTypeEssence(response.headers.get("Content-Type"));
    if (!contentType || !rule.contentTypes.includes(contentType)) {
      await response.body?.cancel();
      throw mediaUnavailable(
        "wrong_type",
        `its content type is ${contentType ?? "missing"}; ${type} takes ${rule.contentTypes.join(", ")}.`,
      );
    }
    const declared = Number(response.headers.get("Content-Length") ?? Number.NaN);
    if (declared > rule.maxBytes) {
      await response.body?.cancel();
      throw mediaUnavailable("too_large", tooLarge(type));
    }
    return { response, contentType };
  }
}

/** The detail of a `too_large` problem for `type`. */
export function tooLarge(type: MediaType): string {
  const max = MEDIA_RULES[type].maxBytes;
  const limit = max < 1024 * 1024 ? `${max / 1024} KB` : `${max / (1024 * 1024)} MB`;
  return `it is larger than ${limit}, the limit for ${type}.`;
}

/** `location` resolved against the URL it came from (RFC 9110 §10.2.2), or null. */
function resolve(location: string, base: URL): URL | null {
  try {
    return new URL(location, base);
  } catch {
    return null;
  }
}

/**
 * Why a redirect to `next` is not followed, or null: it must keep to the `media_url` rule (https,
 * port 443, no credentials, a public host; or the local exception `options` allows) and to the
 * host name of the URL first given.
 */
function redirectProblem(next: URL, origin: URL, options: MediaUrlOptions): string | null {
  const problem = mediaUrlProblem(next.href, options);
  if (problem) return `to ${next.protocol}//${next.host} is refused: it ${problem}`;
  if (next.hostname !== origin.hostname)
    return `to another host (${next.hostname}) is refused: only ${origin.hostname} is followed`;
  return null;
}
