import { imageSize } from "image-size";

/*
 * What a sticker must be (Meta, WhatsApp Cloud API reference, Media, "Supported media types":
 * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types):
 * a WebP image of 512×512 pixels, at most 100 KB when static and 500 KB when animated. The
 * content type and the 500 KB cap are checked as any media's (rules.ts); the rest here, on the
 * fetched bytes.
 */

/** A sticker's width and height, in pixels. */
export const STICKER_SIDE = 512;
/** Largest static sticker, in bytes (an animated one's cap is rules.ts `MEDIA_RULES.sticker`). */
export const MAX_STATIC_STICKER_BYTES = 100 * 1024;

/**
 * Why `body`, a sticker's whole file, cannot be sent, or null: not a WebP image (read by
 * image-size), not {@link STICKER_SIDE} pixels square, or static and over
 * {@link MAX_STATIC_STICKER_BYTES}. The words finish "The media at media_url cannot be sent: ".
 */
export function stickerProblem(body: Uint8Array): string | null {
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(body);
  } catch {
    return "it is not a WebP image.";
  }
  if (size.type !== "webp") return `it is a ${size.type ?? "unknown"} image; a sticker is WebP.`;
  if (size.width !== STICKER_SIDE || size.height !== STICKER_SIDE)
    return `it is ${size.width}×${size.height} pixels; a sticker is ${STICKER_SIDE}×${STICKER_SIDE}.`;
  if (!isAnimatedWebp(body) && body.byteLength > MAX_STATIC_STICKER_BYTES)
    return `it is a static sticker of ${body.byteLength} bytes; the limit is 100 KB (500 KB when animated).`;
  return null;
}

/**
 * Whether WebP file `body` is animated: its first chunk is `VP8X` and the chunk's flags (the byte
 * after the chunk's 8-byte header, at offset 20) have the Animation bit, 0x02 (RFC 9649, "WebP
 * Image Format", §2.7 "Extended File Format": flags `Rsv I L E X A R` from the high bit down).
 */
export function isAnimatedWebp(body: Uint8Array): boolean {
  const chunk = String.fromCharCode(...body.subarray(12, 16));
  return chunk === "VP8X" && ((body[20] ?? 0) & 0x02) !== 0;
}
