import { type MediaLinkSigner, signedMediaUrl } from "../media/link";
import type { OutboundMessage } from "./gateway";

/*
 * Media URLs as the HTTP gateways (WAHA, Evolution API) need them when sending media by URL.
 */

/**
 * The last path segment of an absolute `url`, percent-decoded (`https://x/files/report%201.pdf` →
 * `report 1.pdf`), or `document` when the path has none, the URL does not parse or the segment
 * is not valid percent-encoding. Used as a document's file name, which both gateways want.
 */
export function fileNameOf(url: string): string {
  try {
    const segment = new URL(url).pathname.split("/").pop() ?? "";
    return decodeURIComponent(segment) || "document";
  } catch {
    return "document";
  }
}

/**
 * The URL a real gateway fetches `message`'s media from: a signed link of ours to the stored copy
 * (src/media/link.ts), valid `MEDIA_LINK_TTL_SECONDS` from `now` (epoch ms), never the caller's
 * URL, which may lead inside the gateway's network. Null when the message has no stored copy (a
 * text, or a media message queued before media were stored): such a message is not sent.
 */
export async function mediaLinkOf(
  signer: MediaLinkSigner,
  message: OutboundMessage,
  now = Date.now(),
): Promise<string | null> {
  return message.media ? await signedMediaUrl(signer, message.media.key, now) : null;
}

/** The reason a media message without a stored copy is rejected (never retried). */
export const MEDIA_NOT_STORED = "media_not_stored";
