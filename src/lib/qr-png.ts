import { encode } from "fast-png";
import qrcode from "qrcode-generator";

/** Pixels per QR module. At least 4 is this API's floor; 8 keeps phone cameras comfortable. */
const MODULE_PIXELS = 8;
/** Light border around the symbol, in modules: the 4 modules ISO/IEC 18004 §5.3.8 requires. */
const QUIET_ZONE_MODULES = 4;

/**
 * Renders `payload` as a QR code (byte mode, error correction level M, smallest version that fits,
 * from `qrcode-generator`) and encodes it as an 8-bit greyscale PNG (`fast-png`).
 *
 * @returns `data:image/png;base64,…` — the shape of `qr_code` in `POST /v1/chatapp/sessions` of
 *   openapi.json (docs/sessions.md, Creating, listing and linking).
 */
export function qrPngDataUri(payload: string): string {
  const qr = qrcode(0, "M");
  qr.addData(payload, "Byte");
  qr.make();
  const modules = qr.getModuleCount();
  const side = (modules + 2 * QUIET_ZONE_MODULES) * MODULE_PIXELS;
  const pixels = new Uint8Array(side * side).fill(255);
  for (let row = 0; row < modules; row++) {
    for (let col = 0; col < modules; col++) {
      if (!qr.isDark(row, col)) continue;
      const top = (row + QUIET_ZONE_MODULES) * MODULE_PIXELS;
      const left = (col + QUIET_ZONE_MODULES) * MODULE_PIXELS;
      for (let y = top; y < top + MODULE_PIXELS; y++)
        pixels.fill(0, y * side + left, y * side + left + MODULE_PIXELS);
    }
  }
  const png = encode({ width: side, height: side, data: pixels, channels: 1, depth: 8 });
  return `data:image/png;base64,${toBase64(png)}`;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
