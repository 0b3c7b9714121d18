/**
 * A WebP file of the extended format (RFC 9649, "WebP Image Format", §2.7): `RIFF` size `WEBP`, a
 * `VP8X` chunk with the Animation flag (0x02) when `animated` and the canvas `width`×`height`,
 * padded with an unknown chunk to `bytes` in all. What src/media/sticker.ts reads of a sticker.
 */
export function webp(width: number, height: number, { animated = false, bytes = 64 } = {}): Uint8Array {
  const file = new Uint8Array(bytes);
  const view = new DataView(file.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) file[offset + i] = text.charCodeAt(i);
  };
  const side = (offset: number, value: number) => {
    file[offset] = (value - 1) & 0xff;
    file[offset + 1] = ((value - 1) >> 8) & 0xff;
    file[offset + 2] = ((value - 1) >> 16) & 0xff;
  };
  ascii(0, "RIFF");
  view.setUint32(4, bytes - 8, true);
  ascii(8, "WEBP");
  ascii(12, "VP8X");
  view.setUint32(16, 10, true);
  file[20] = animated ? 0x02 : 0;
  side(24, width);
  side(27, height);
  ascii(30, "XPAD");
  view.setUint32(34, bytes - 38, true);
  return file;
}
