// Incoming media, inline: the bytes an incoming message's media is kept as are served at
// `GET /v1/chatapp/messages/{id}/media` to a bearer key (docs/messages.md, Incoming media). An `<img>`,
// `<video>` or `<audio>` cannot send that header, so the console fetches them itself and shows
// them through an object URL, which it revokes when the view replaces it or the page closes.

import { ApiError, apiBlob, problemBox } from "./api.js";
import { fill, h, timeElement } from "./dom.js";

const MEDIA_TYPES = new Set(["image", "video", "audio", "document", "sticker"]);

/** File name extensions of the content types WhatsApp sends media as (src/media/rules.ts). */
const EXTENSIONS = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "video/mp4": "mp4",
  "video/3gpp": "3gp",
  "audio/aac": "aac",
  "audio/amr": "amr",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/ogg": "ogg",
  "text/plain": "txt",
  "application/pdf": "pdf",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.ms-powerpoint": "ppt",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
};

/** What the list says of media it does not show (the message's page says more). */
const COMPACT_NOTES = { pending: "Media not kept yet", failed: "Media not kept", expired: "Media deleted" };

/** The API path of message `id`'s kept media. */
function mediaPath(id) {
  return `/v1/chatapp/messages/${encodeURIComponent(id)}/media`;
}

/**
 * Where an incoming message's media stands: `null` (not incoming, or no media type), `failed`
 * (`metadata.media_error`), `expired` (`metadata.media_expired_at`), `kept` (its `media_url` is
 * the API's own media URL) or `pending` (not kept yet, or never: the API answers 404 media_not_kept).
 */
export function mediaState(message) {
  if (message.direction !== "incoming" || !MEDIA_TYPES.has(message.type)) return null;
  if (message.metadata?.media_error) return "failed";
  if (message.metadata?.media_expired_at) return "expired";
  if (typeof message.media_url === "string" && message.media_url.endsWith(mediaPath(message.id)))
    return "kept";
  return "pending";
}

/** A file name for a kept file of content type `type`: the API keeps none, so the message id and the type's extension. */
export function fileName(message, type) {
  const essence = (type || "").split(";")[0].trim().toLowerCase();
  const extension = EXTENSIONS[essence] ?? "bin";
  return `${message.type}-${message.id.slice(0, 8)}.${extension}`;
}

/** A byte count as "12.3 KB" (1 KB = 1,024 bytes: the KiB of the docs/messages.md's Incoming media). */
function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The object URLs of the media a page shows, one per message, fetched once: an entry is fetched
 * again (and its old URL revoked) only when the message's media changed (`media_url`, its error).
 */
export class MediaCache {
  /** @type {Map<string, {key: string, result: Promise<{url: string, blob: Blob, type: string, inline: boolean} | {error: unknown}>}>} */
  entries = new Map();

  /**
   * The media of `message` as `{url, blob, type, inline}` (api.js `apiBlob`) or `{error}` (an
   * ApiError, e.g. 404 media_not_kept).
   */
  load(message) {
    const key = `${message.media_url} ${mediaState(message)}`;
    const entry = this.entries.get(message.id);
    if (entry?.key === key) return entry.result;
    if (entry) this.revoke(entry);
    const result = apiBlob(mediaPath(message.id)).then(
      (file) => ({ url: URL.createObjectURL(file.blob), ...file }),
      (error) => ({ error }),
    );
    this.entries.set(message.id, { key, result });
    return result;
  }

  /** Revokes the URLs of the messages not in `ids` (those no longer on the page). */
  keepOnly(ids) {
    const kept = new Set(ids);
    for (const [id, entry] of this.entries) {
      if (kept.has(id)) continue;
      this.revoke(entry);
      this.entries.delete(id);
    }
  }

  /** Revokes every URL (the page closes). */
  clear() {
    this.keepOnly([]);
  }

  revoke(entry) {
    entry.result.then((loaded) => "url" in loaded && URL.revokeObjectURL(loaded.url));
  }
}

/**
 * The element that shows the fetched media, by the message's type: an image, video or audio only
 * when it was served `inline` (else, whatever the message's type, a download link).
 */
function mediaElement(message, { url, blob, type, inline }, compact) {
  // A sticker is a WebP image (docs/messages.md, Sending messages → Stickers), shown as one.
  const kind =
    message.type === "document" || !inline ? "document" : message.type === "sticker" ? "image" : message.type;
  const label = message.content
    ? `${message.type}: ${message.content}`
    : `${message.type} from ${message.from_number}`;
  if (kind === "image")
    return h("img", { src: url, alt: label, class: compact ? "media-thumb" : "media-image" });
  if (kind === "video")
    return h("video", { src: url, controls: true, class: "media-video", "aria-label": label });
  if (kind === "audio") return h("audio", { src: url, controls: true, "aria-label": label });
  const name = fileName(message, type);
  return h(
    "a",
    { href: url, download: name, class: "media-download" },
    `Download ${name}`,
    ` (${size(blob.size)})`,
  );
}

/** Why the media is not shown, as text: its recorded error, its expiry, or not kept. */
function mediaNote(message, state, problem) {
  if (state === "failed") {
    const error = message.metadata.media_error;
    return h(
      "p",
      { class: "media-note media-failed" },
      h("strong", {}, "The media could not be kept"),
      `: ${error.reason ?? "error"}`,
      error.detail ? ` (${error.detail})` : "",
      typeof error.tries === "number" ? `, after ${error.tries} ${error.tries === 1 ? "try" : "tries"}` : "",
      ".",
    );
  }
  if (state === "expired")
    return h(
      "p",
      { class: "media-note" },
      "The media was deleted after the retention period, at ",
      timeElement(message.metadata.media_expired_at),
      ".",
    );
  return h(
    "p",
    { class: "media-note" },
    h("strong", {}, problem?.title ?? "Media not kept"),
    problem?.detail ? `: ${problem.detail}` : " yet: it may still be downloading.",
  );
}

/**
 * Draws `message`'s media into `box`: the image, video, audio or a download link once fetched, or
 * why it is not shown. `compact` (the list): only kept media is fetched, an image as a thumbnail,
 * a video or audio as a link to the message's page (where it plays).
 * Does nothing for a message without incoming media.
 * @param {HTMLElement} box
 * @param {any} message a Message as the API shows it
 * @param {MediaCache} cache
 * @param {{compact?: boolean}} [options]
 */
export function showMedia(box, message, cache, options = {}) {
  const state = mediaState(message);
  const key = state ? `${message.id} ${message.media_url} ${state}` : "";
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.dataset.media = state ?? "";
  if (!state) {
    box.replaceChildren();
    return;
  }
  if (options.compact && state !== "kept") {
    const reason = state === "failed" ? `: ${message.metadata.media_error.reason ?? "error"}` : "";
    fill(box, h("span", { class: "media-note muted" }, `${COMPACT_NOTES[state]}${reason}`));
    return;
  }
  if (options.compact && (message.type === "video" || message.type === "audio")) {
    // The list is drawn again while messages move: a player there would stop mid-play.
    const page = `#/messages/${encodeURIComponent(message.id)}`;
    fill(box, h("a", { href: page, class: "media-note" }, `Play the ${message.type}`));
    return;
  }
  if (state === "failed" || state === "expired") {
    fill(box, mediaNote(message, state, null));
    return;
  }
  if (!box.firstChild) fill(box, h("p", { class: "muted small" }, "Loading media…"));
  cache.load(message).then((loaded) => {
    if (box.dataset.key !== key) return;
    if ("url" in loaded) fill(box, mediaElement(message, loaded, options.compact));
    else if (loaded.error instanceof ApiError && loaded.error.problem?.code === "media_not_kept")
      fill(box, mediaNote(message, "pending", loaded.error.problem));
    else fill(box, problemBox(loaded.error));
  });
}
