import { ApiError } from "../errors";
import { log } from "../lib/log";
import type { MediaUrlOptions } from "../lib/media-url";
import { mediaUnavailable, openMedia, tooLarge } from "./fetch";
import { MEDIA_FETCH_TIMEOUT_MS, MEDIA_RULES, type MediaType } from "./rules";
import { stickerProblem } from "./sticker";

/** A media file the service holds: its key in the `MEDIA` R2 bucket, content type and size. */
export interface StoredMedia {
  /** A fresh uuid per send or campaign. */
  key: string;
  /** As the host answered it (its essence), one the message type takes. */
  contentType: string;
  /** Size in bytes. */
  bytes: number;
}

/**
 * R2's part size for the uploads here: every part but the last must be at least 5 MiB and all of
 * them the same size (Cloudflare R2 docs, "Upload objects → Multipart upload"). A body that fits in
 * one part is stored with one `put`.
 */
export const PART_BYTES = 5 * 1024 * 1024;

/**
 * Fetches the media at `url` for a message of `type` ({@link openMedia}: redirects, status,
 * content type) and stores it in `bucket` under a fresh key, counting the bytes as they arrive:
 * past the type's cap the download stops and nothing is kept, whatever `Content-Length` said.
 * The body streams through a buffer of one {@link PART_BYTES} part (never held whole), so a
 * 100 MB document stays within the Worker's memory. The whole fetch has
 * {@link MEDIA_FETCH_TIMEOUT_MS}. One call serves every recipient of a send or campaign.
 * `options`: the deployment's exception to the `media_url` rule (`{ allowLocalhost:
 * MEDIA_ALLOW_HTTP_LOCALHOST }`), as {@link openMedia} applies it.
 *
 * @throws ApiError `media_unavailable` (422, with its `reason`) for media that cannot be sent;
 *   `validation_failed` (422) for a `url` outside the rule; `service_unavailable` (503) when R2
 *   refuses the write. Nothing is stored in any case.
 */
export async function storeMedia(
  bucket: R2Bucket,
  url: string,
  type: MediaType,
  options: MediaUrlOptions = {},
): Promise<StoredMedia> {
  const signal = AbortSignal.timeout(MEDIA_FETCH_TIMEOUT_MS);
  const { response, contentType } = await openMedia(url, type, signal, options);
  const key = crypto.randomUUID();
  const bytes = await uploadBody(bucket, key, response, {
    maxBytes: MEDIA_RULES[type].maxBytes,
    contentType,
    tooLarge: tooLarge(type),
    ...(type === "sticker" ? { check: stickerProblem } : {}),
  });
  return { key, contentType, bytes };
}

/**
 * Deletes a stored media file that no message will use (a send that was not charged, a deleted or
 * refused draft campaign). Never throws: a failure is logged (`media_discard_failed`).
 */
export async function discardMedia(bucket: R2Bucket, key: string): Promise<void> {
  await bucket.delete(key).catch((error: unknown) => {
    log.write("warn", "media_discard_failed", { key, error }, "error");
  });
}

/**
 * Streams `response`'s body into `bucket` as `key`, in parts of {@link PART_BYTES}: the first
 * full part opens a multipart upload; a body smaller than one part is one `put`. Past
 * `limits.maxBytes` (counted as the bytes arrive) the upload stops and nothing is kept.
 * @returns the number of bytes stored.
 * @throws ApiError `media_unavailable` (`too_large` with `limits.tooLarge` as its detail, `empty`,
 *   `unreachable`, `not_a_sticker` with `limits.check`'s words); `service_unavailable` when R2
 *   refuses the write.
 */
export async function uploadBody(
  bucket: R2Bucket,
  key: string,
  response: Response,
  limits: {
    maxBytes: number;
    contentType: string;
    tooLarge: string;
    /** Why the whole body cannot be sent, or null (a sticker's rules); only for a body within one part. */
    check?: (body: Uint8Array) => string | null;
  },
): Promise<number> {
  const options = { httpMetadata: { contentType: limits.contentType } };
  const reader = response.body?.getReader();
  if (!reader) throw mediaUnavailable("empty", "its body is empty.");
  let part = new Uint8Array(PART_BYTES);
  let filled = 0;
  let total = 0;
  let multipart: R2MultipartUpload | null = null;
  const parts: R2UploadedPart[] = [];
  try {
    for (;;) {
      const chunk = await readChunk(reader);
      if (!chunk) break;
      total += chunk.byteLength;
      if (total > limits.maxBytes) throw mediaUnavailable("too_large", limits.tooLarge);
      for (let offset = 0; offset < chunk.byteLength; ) {
        const taken = Math.min(PART_BYTES - filled, chunk.byteLength - offset);
        part.set(chunk.subarray(offset, offset + taken), filled);
        filled += taken;
        offset += taken;
        if (filled === PART_BYTES) {
          const full = part;
          multipart ??= await storage(() => bucket.createMultipartUpload(key, options));
          const open = multipart;
          parts.push(await storage(() => open.uploadPart(parts.length + 1, full)));
          part = new Uint8Array(PART_BYTES);
          filled = 0;
        }
      }
    }
    if (total === 0) throw mediaUnavailable("empty", "its body is empty.");
    if (!multipart) {
      const body = part.subarray(0, filled);
      const problem = limits.check?.(body);
      if (problem) throw mediaUnavailable("not_a_sticker", problem);
      await storage(() => bucket.put(key, body, options));
      return total;
    }
    if (limits.check) throw new Error("a checked body must fit one part");
    const open = multipart;
    if (filled > 0) {
      const last = part.subarray(0, filled);
      parts.push(await storage(() => open.uploadPart(parts.length + 1, last)));
    }
    await storage(() => open.complete(parts));
    return total;
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    await multipart?.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * The next chunk of the body, or null at its end. @throws ApiError `media_unavailable`
 * (`unreachable`), or the ApiError a body of ours failed with (a decoding body, src/media/incoming.ts
 * `base64MediaAnswer`, names what it found wrong).
 */
async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | null> {
  try {
    const { done, value } = await reader.read();
    return done ? null : value;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    throw mediaUnavailable(
      "unreachable",
      timedOut ? "the download did not finish in time." : "the download broke off.",
    );
  }
}

/** Runs an R2 call; its failure is ours, not the media's: 503 `service_unavailable`. */
async function storage<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    log.error("media_store_failed", { error });
    throw new ApiError("service_unavailable", "The media could not be stored; try again.");
  }
}
