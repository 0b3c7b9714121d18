import { HttpResponse, http } from "msw";

/**
 * The fake public host that `media_url`s in tests point at (`.test` is reserved, RFC 2606), and
 * the default answer of the test network for it (test/network.ts): every GET of a path there is
 * 200 with {@link mediaBytes} of the path and the content type of its extension
 * ({@link contentTypeOf}). Tests that need another answer (a redirect, a large body, a wrong
 * type) put their own handler first with `network.use`.
 */
export const MEDIA_HOST = "https://cdn.example.test";

const CONTENT_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  mp4: "video/mp4",
  "3gp": "video/3gpp",
  mov: "video/quicktime",
  ogg: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  aac: "audio/aac",
  pdf: "application/pdf",
  txt: "text/plain",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  html: "text/html",
};

/** The content type the fake host answers for `path` (by its extension; else octet-stream). */
export function contentTypeOf(path: string): string {
  const extension =
    path
      .split("?")[0]
      ?.match(/\.([a-z0-9]+)$/i)?.[1]
      ?.toLowerCase() ?? "";
  return CONTENT_TYPES[extension] ?? "application/octet-stream";
}

/** The bytes the fake host answers for `path`: its own text, so each file is told apart. */
export function mediaBytes(path: string): Uint8Array {
  return new TextEncoder().encode(`fake media of ${path}`);
}

/** The test network's default handlers for {@link MEDIA_HOST}. */
export const mediaHostHandlers = [
  http.get(`${MEDIA_HOST}/*`, ({ request }) => {
    const url = new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    return new HttpResponse(mediaBytes(path), { headers: { "Content-Type": contentTypeOf(url.pathname) } });
  }),
];
