import { ApiError } from "../errors";
import { Base64TextDecoder, findStringMember, type StringMemberStart } from "../lib/json-base64";
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
export const INCOMING_MEDIA_REASONS = [
  "unreachable",
  "http_error",
  "refused",
  "too_large",
  "empty",
  "not_supported",
  "storage",
] as const;

/** One of {@link INCOMING_MEDIA_REASONS}. */
export type IncomingMediaReason = (typeof INCOMING_MEDIA_REASONS)[number];

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
 * @throws IncomingMediaError `too_large`, `empty` (permanent), `unreachable`, `storage`;
 *   `http_error` when a decoding body ({@link base64MediaAnswer}) finds its answer broken.
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
    if (reason === "http_error") return new IncomingMediaError("http_error", error.detail, false);
    return new IncomingMediaError("unreachable", error.detail, false);
  }
  if (error instanceof ApiError) return new IncomingMediaError("storage", "R2 refused the write.", false);
  return new IncomingMediaError("unreachable", String(error), false);
}

/** How far into Evolution API's answer its `base64` member must begin: 64 KiB (1 KiB = 1,024 bytes). */
export const BASE64_ANSWER_HEAD_CHARS = 64 * 1024;

/**
 * Evolution API's base64 media answer (`POST /chat/getBase64FromMediaMessage/{instance}`, status
 * 200 or 201: `{ mediaType, fileName, caption, size, mimetype, base64, buffer }`, the members in
 * that order as Evolution's Baileys channel writes them) as a media response whose body is the
 * decoded bytes, streamed: the JSON is read as it arrives, up to where `base64` begins (within
 * {@link BASE64_ANSWER_HEAD_CHARS}) and then through the string, which is decoded 4 characters at
 * a time (src/lib/json-base64.ts); neither the JSON nor the file is ever held whole. Its
 * `Content-Type` is the answer's `mimetype` when written before `base64`; it has no
 * `Content-Length` (the size is counted as the body is stored, `keepIncomingMedia`). A declared
 * `Content-Length` past the base64 of {@link INCOMING_MEDIA_MAX_BYTES} is refused unread.
 *
 * @throws IncomingMediaError `http_error` for another status (permanent for a 4xx but 408 and
 *   429), a body that is not a JSON object, or one without a `base64` string where it may begin;
 *   `too_large` (permanent); `unreachable` when the body breaks off or times out before `base64`.
 *   The body itself fails, while it is read, with an ApiError `media_unavailable` of reason
 *   `http_error` (`keepIncomingMedia` makes it an IncomingMediaError) when the base64 does not
 *   decode or the JSON ends inside it, and with the network's error when the body breaks off.
 */
export async function base64MediaAnswer(response: Response): Promise<Response> {
  if (response.status !== 200 && response.status !== 201) return checkMediaAnswer(response, "Evolution API");
  const declared = Number(response.headers.get("Content-Length") ?? Number.NaN);
  if (declared > Math.ceil(INCOMING_MEDIA_MAX_BYTES / 3) * 4 + BASE64_ANSWER_HEAD_CHARS) {
    await response.body?.cancel();
    throw new IncomingMediaError("too_large", tooLargeDetail, true);
  }
  if (!response.body) throw new IncomingMediaError("http_error", "Evolution API answered no base64.", false);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let head = "";
  let start: StringMemberStart | "absent" | null = null;
  try {
    while (start === null) {
      const next = await readAnswer(reader);
      if (next === null) throw new SyntaxError("The JSON text ends early.");
      head += next;
      start = findStringMember(head, "base64");
      if (start === null && head.length > BASE64_ANSWER_HEAD_CHARS) start = "absent";
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof IncomingMediaError) throw error;
    throw new IncomingMediaError("http_error", "Evolution API answered a body that is not JSON.", false);
  }
  if (start === "absent") {
    await reader.cancel().catch(() => undefined);
    throw new IncomingMediaError("http_error", "Evolution API answered no base64.", false);
  }
  const { mimetype } = start.before;
  const headers: Record<string, string> = {};
  if (typeof mimetype === "string" && mimetype) headers["Content-Type"] = mimetype;
  return new Response(decodedBase64(reader, head.slice(start.valueStart)), { status: 200, headers });
}

/** The next piece of the answer's text, or null at its end. @throws IncomingMediaError `unreachable`. */
async function readAnswer(reader: ReadableStreamDefaultReader<string>): Promise<string | null> {
  try {
    const { done, value } = await reader.read();
    return done ? null : value;
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    throw new IncomingMediaError(
      "unreachable",
      timedOut ? "Evolution API did not finish in time." : "Evolution API's answer broke off.",
      false,
    );
  }
}

/**
 * The bytes of the base64 string whose text begins with `first` and goes on in `reader`, decoded
 * as each piece is pulled. At the string's closing quote the body ends and the rest of the JSON is
 * cancelled unread; cancelling the body cancels the answer.
 */
function decodedBase64(
  reader: ReadableStreamDefaultReader<string>,
  first: string,
): ReadableStream<Uint8Array> {
  const decoder = new Base64TextDecoder();
  let pending: string | null = first;
  const fail = async (controller: ReadableStreamDefaultController<Uint8Array>, detail: string) => {
    await reader.cancel().catch(() => undefined);
    controller.error(
      new ApiError("media_unavailable", `Evolution API answered ${detail}`, {
        extra: { reason: "http_error" },
      }),
    );
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let piece = pending;
        pending = null;
        if (piece === null) {
          let next: ReadableStreamReadResult<string>;
          try {
            next = await reader.read();
          } catch (error) {
            // The network's own error (a timeout, a broken connection): the reader names it.
            controller.error(error);
            return;
          }
          if (next.done) return fail(controller, "JSON that ends inside base64.");
          piece = next.value;
        }
        const close = piece.indexOf('"');
        let bytes: Uint8Array;
        let last: Uint8Array | null = null;
        try {
          bytes = decoder.push(close === -1 ? piece : piece.slice(0, close));
          if (close !== -1) last = decoder.end();
        } catch {
          return fail(controller, "base64 that does not decode.");
        }
        if (bytes.byteLength > 0) controller.enqueue(bytes);
        if (last) {
          if (last.byteLength > 0) controller.enqueue(last);
          controller.close();
          await reader.cancel().catch(() => undefined);
          return;
        }
        if (bytes.byteLength > 0) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
