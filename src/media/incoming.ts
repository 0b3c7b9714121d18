import { ApiError } from "../errors";
import { contentTypeEssence } from "./rules";
import { uploadBody } from "./store";

/*
 * Media of incoming messages, kept: the session object downloads a message's media from its
 * gateway once and stores it in the `MEDIA` R2 bucket (src/sessions/incoming-media.ts); the API
 * serves it at `GET /v1/chatapp/messages/{id}/media` to the account's keys.
 */

/** Largest incoming media kept: 100 MB (1 MB = 1,048,576 bytes), WhatsApp's largest (a document). */
export const INCOMING_MEDIA_MAX_BYTES = 100 * 1024 * 1024;

/** Milliseconds one download may take, from the request to its last byte. */
export const INCOMING_MEDIA_TIMEOUT_MS = 60_000;

/**
 * Why an incoming message's media could not be kept (`metadata.media_error.reason`):
 * - `unreachable`: the gateway (or the sandbox's URL) could not be reached or did not finish in time;
 * - `http_error`: it answered something other than the media;
 * - `refused`: the source itself is refused (a sandbox URL that is not public https);
 * - `too_large`: over {@link INCOMING_MEDIA_MAX_BYTES};
 * - `empty`: a body of no bytes;
 * - `not_supported`: the session's gateway cannot download media;
 * - `storage`: R2 refused the write.
 */
export type IncomingMediaReason =
  | "unreachable"
  | "http_error"
  | "refused"
  | "too_large"
  | "empty"
  | "not_supported"
  | "storage";

/**
 * A download of incoming media that failed. `permanent` when trying again cannot help (the
 * gateway answered 4xx, the media is too large); otherwise it is tried again (bounded).
 */
export class IncomingMediaError extends Error {
  constructor(
    readonly reason: IncomingMediaReason,
    detail: string,
    readonly permanent: boolean,
  ) {
    super(detail);
    this.name = "IncomingMediaError";
  }
}

/** The R2 key of incoming message `messageId`'s media: `incoming/<id>` (one object per message). */
export function incomingMediaKey(messageId: string): string {
  return `incoming/${messageId}`;
}

/** The API's URL of message `messageId`'s kept media: `<origin>/v1/chatapp/messages/<id>/media`. */
export function incomingMediaUrl(origin: string, messageId: string): string {
  return `${origin.replace(/\/+$/, "")}/v1/chatapp/messages/${encodeURIComponent(messageId)}/media`;
}

/** An incoming message's kept media: its R2 key, content type and size in bytes. */
export interface KeptMedia {
  key: string;
  contentType: string;
  bytes: number;
}

/**
 * Checks an answer of the gateway's media download: 200 (or 203), with a `Content-Length`, when
 * given, within {@link INCOMING_MEDIA_MAX_BYTES}. @throws IncomingMediaError otherwise (the body
 * is cancelled): a 4xx but 408 and 429 is permanent, as is a too large length.
 */
export async function checkMediaAnswer(response: Response, source: string): Promise<Response> {
  if (response.status !== 200 && response.status !== 203) {
    await response.body?.cancel();
    const permanent =
      response.status >= 400 && response.status < 500 && ![408, 429].includes(response.status);
    throw new IncomingMediaError("http_error", `${source} answered ${response.status}.`, permanent);
  }
  const declared = Number(response.headers.get("Content-Length") ?? Number.NaN);
  if (declared > INCOMING_MEDIA_MAX_BYTES) {
    await response.body?.cancel();
    throw new IncomingMediaError("too_large", tooLargeDetail, true);
  }
  return response;
}

const tooLargeDetail = `it is larger than ${INCOMING_MEDIA_MAX_BYTES / (1024 * 1024)} MB.`;

/**
 * Streams `response` (a checked media answer) into `bucket` under {@link incomingMediaKey} of
 * `messageId`, counting the bytes as they arrive (never held whole; src/media/store.ts
 * `uploadBody`): past {@link INCOMING_MEDIA_MAX_BYTES} the upload stops and nothing is kept. The
 * content type is the answer's, else `hint` (the gateway's `mimetype` of the message), else
 * `application/octet-stream`. Writing the same message's media again replaces it (idempotent).
 *
 * @throws IncomingMediaError `too_large`, `empty` (permanent), `unreachable`, `storage`.
 */
export async function keepIncomingMedia(
  bucket: R2Bucket,
  messageId: string,
  response: Response,
  hint: string | null,
): Promise<KeptMedia> {
  const contentType =
    contentTypeEssence(response.headers.get("Content-Type")) ??
    contentTypeEssence(hint) ??
    "application/octet-stream";
  const key = incomingMediaKey(messageId);
  try {
    const bytes = await uploadBody(bucket, key, response, {
      maxBytes: INCOMING_MEDIA_MAX_BYTES,
      contentType,
      tooLarge: tooLargeDetail,
    });
    return { key, contentType, bytes };
  } catch (error) {
    throw asIncomingMediaError(error);
  }
}

/** The {@link IncomingMediaError} an upload's failure stands for. */
function asIncomingMediaError(error: unknown): IncomingMediaError {
  if (error instanceof IncomingMediaError) return error;
  if (error instanceof ApiError && error.code === "media_unavailable") {
    const reason = error.options.extra?.reason;
    if (reason === "too_large") return new IncomingMediaError("too_large", tooLargeDetail, true);
    if (reason === "empty") return new IncomingMediaError("empty", "its body is empty.", true);
    return new IncomingMediaError("unreachable", error.detail, false);
  }
  if (error instanceof ApiError) return new IncomingMediaError("storage", "R2 refused the write.", false);
  return new IncomingMediaError("unreachable", String(error), false);
}

/**
 * Evolution API's base64 media answer (`{ mimetype, base64, … }`, status 200 or 201) as a media
 * response: the decoded bytes with `mimetype` as `Content-Type` and their `Content-Length`. The
 * JSON is read whole: a declared length past the base64 of {@link INCOMING_MEDIA_MAX_BYTES} is
 * refused unread.
 * @throws IncomingMediaError `http_error` for another status or an answer without `base64`
 *   (permanent for a 4xx but 408 and 429), `too_large`, `unreachable` when the body breaks off.
 */
export async function base64MediaAnswer(response: Response): Promise<Response> {
  if (response.status !== 200 && response.status !== 201) return checkMediaAnswer(response, "Evolution API");
  const declared = Number(response.headers.get("Content-Length") ?? Number.NaN);
  if (declared > Math.ceil(INCOMING_MEDIA_MAX_BYTES / 3) * 4 + 64 * 1024) {
    await response.body?.cancel();
    throw new IncomingMediaError("too_large", tooLargeDetail, true);
  }
  const checked = response;
  let answer: { base64?: unknown; mimetype?: unknown };
  try {
    answer = (await checked.json()) as { base64?: unknown; mimetype?: unknown };
  } catch {
    throw new IncomingMediaError("http_error", "Evolution API answered a body that is not JSON.", false);
  }
  if (typeof answer?.base64 !== "string" || answer.base64 === "")
    throw new IncomingMediaError("http_error", "Evolution API answered no base64.", false);
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(answer.base64), (c) => c.charCodeAt(0));
  } catch {
    throw new IncomingMediaError("http_error", "Evolution API answered base64 that does not decode.", false);
  }
  if (bytes.byteLength > INCOMING_MEDIA_MAX_BYTES)
    throw new IncomingMediaError("too_large", tooLargeDetail, true);
  const headers: Record<string, string> = { "Content-Length": String(bytes.byteLength) };
  if (typeof answer.mimetype === "string" && answer.mimetype) headers["Content-Type"] = answer.mimetype;
  return new Response(bytes, { status: 200, headers });
}
