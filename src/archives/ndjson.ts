// Gzipped NDJSON (https://github.com/ndjson/ndjson-spec), the archives' format, through the
// runtime's CompressionStream and DecompressionStream (RFC 1952 gzip).

/** `lines` (each one JSON text, no newline inside) as gzipped NDJSON: each line ends in `\n`. */
export async function gzipLines(lines: readonly string[]): Promise<Uint8Array> {
  const text = lines.map((line) => `${line}\n`).join("");
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The lines of gzipped NDJSON `body` (empty lines dropped). */
export async function gunzipLines(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const text = await new Response(body.pipeThrough(new DecompressionStream("gzip"))).text();
  return text.split("\n").filter((line) => line.length > 0);
}

/** Gzipped `body` decompressed, as a stream. */
export function gunzip(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return body.pipeThrough(new DecompressionStream("gzip"));
}
