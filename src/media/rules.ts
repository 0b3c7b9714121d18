/*
 * What a message's media may be, per message type: WhatsApp's own limits, so that nothing the
 * service accepts is refused by the network later.
 */

/** The message types that carry media. */
export type MediaType = "image" | "video" | "audio" | "document" | "sticker";

/** The limits of one media type: its largest size and the content types it takes. */
export interface MediaRule {
  /** Largest accepted body, in bytes (1 MB = 1,048,576 bytes). */
  maxBytes: number;
  /** Accepted content types (media type essence, lower case, without parameters). */
  contentTypes: readonly string[];
}

const KB = 1024;
const MB = 1024 * KB;

/**
 * The size caps and content types of WhatsApp's "Supported media types" (Meta, WhatsApp Cloud API
 * reference, Media:
 * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types): image 5 MB
 * (JPEG, PNG); video 16 MB (MP4, 3GPP: Meta writes `video/3gp`, the registered type is `video/3gpp`, RFC
 * 3839; both are taken); audio 16 MB (AAC, AMR, MP3, MP4 audio, OGG with Opus); document 100 MB (plain text,
 * PDF, Word, Excel, PowerPoint); sticker 500 KB (WebP; an animated sticker's cap, a static one's 100 KB is
 * checked once its bytes are read: src/media/sticker.ts).
 */
export const MEDIA_RULES: Record<MediaType, MediaRule> = {
  image: { maxBytes: 5 * MB, contentTypes: ["image/jpeg", "image/png"] },
  video: { maxBytes: 16 * MB, contentTypes: ["video/mp4", "video/3gpp", "video/3gp"] },
  audio: {
    maxBytes: 16 * MB,
    contentTypes: ["audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"],
  },
  sticker: { maxBytes: 500 * KB, contentTypes: ["image/webp"] },
  document: {
    maxBytes: 100 * MB,
    contentTypes: [
      "text/plain",
      "application/pdf",
      "application/msword",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      "application/vnd.ms-excel",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/vnd.ms-powerpoint",
      "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ],
  },
};

/** The message types that carry media, in {@link MEDIA_RULES}' order. */
export const MEDIA_TYPES = Object.keys(MEDIA_RULES) as MediaType[];

/** Whether messages of `type` carry media (`media_url`, fetched and stored once per send or campaign). */
export function isMediaType(type: string): type is MediaType {
  return MEDIA_TYPES.some((media) => media === type);
}

/** Most redirects followed from a `media_url`, each to the same host (src/media/fetch.ts). */
export const MAX_MEDIA_REDIRECTS = 3;

/** Milliseconds the fetch of a media file may take, from the request to its last byte. */
export const MEDIA_FETCH_TIMEOUT_MS = 60_000;

/**
 * The `Content-Disposition` an incoming message's kept media is served with
 * (`GET /v1/chatapp/messages/{id}/media`; docs/security.md, Hardening): `inline` for an image,
 * audio or video type, which a browser only displays, except `image/svg+xml` (an XML document
 * that runs scripts when opened); `attachment` for anything else, a document or whatever type the
 * sender chose (`text/html`, none), so that it is saved, never rendered on the service's origin.
 * The console follows it (public/console/api.js `apiBlob`). `contentType` is the stored
 * `Content-Type`, parameters allowed; null when unknown.
 */
export function servedDisposition(contentType: string | null): "inline" | "attachment" {
  const essence = contentTypeEssence(contentType);
  if (!essence || essence === "image/svg+xml") return "attachment";
  const [type, subtype] = essence.split("/");
  return subtype && (type === "image" || type === "audio" || type === "video") ? "inline" : "attachment";
}

/**
 * The essence of a `Content-Type` value (RFC 9110 §8.3.1: type and subtype, case-insensitive,
 * without parameters), lower case: `Image/PNG; q=1` → `image/png`. Null when absent or empty.
 */
export function contentTypeEssence(value: string | null): string | null {
  const essence = value?.split(";")[0]?.trim().toLowerCase();
  return essence ? essence : null;
}
