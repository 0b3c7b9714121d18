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
