import { runDurableObjectAlarm } from "cloudflare:test";
import { decode } from "fast-png";
import jsQR from "jsqr";
import { describe, expect, it } from "vitest";
import {
  call,
  createAccount,
  createSession,
  type SessionEnvelope,
  sessionStub,
  storedQrPayload,
} from "./helpers";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PAIR_URL = /^http:\/\/localhost\/sandbox\/pair\/([0-9a-f-]{36})\.[A-Za-z0-9_-]{22}$/;

interface ReadQr {
  text: string;
  side: number;
  modulePixels: number;
  /** Light pixels from each edge to the first dark pixel, in modules. */
  quietModules: { top: number; left: number; bottom: number; right: number };
}

/** Decodes a `data:image/png;base64,…` QR code: checks the PNG, reads the symbol back with jsQR. */
function readQr(dataUri: string): ReadQr {
  const prefix = "data:image/png;base64,";
  expect(dataUri.startsWith(prefix)).toBe(true);
  const bytes = Uint8Array.from(atob(dataUri.slice(prefix.length)), (ch) => ch.charCodeAt(0));
  expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);

  const png = decode(bytes);
  const { width, height, channels } = png;
  expect(width).toBe(height);
  expect(png.depth).toBe(8);
  const data = png.data as Uint8Array;
  expect(data.length).toBe(width * height * channels);

  // jsQR reads RGBA; spread grey (and grey+alpha) pixels over the colour channels.
  const rgba = new Uint8ClampedArray(width * height * 4);
  const dark: boolean[] = new Array(width * height);
  let grey = 0;
  for (let i = 0; i < width * height; i++) {
    const value = data[i * channels] as number;
    const alpha = channels === 2 || channels === 4 ? (data[i * channels + channels - 1] as number) : 255;
    rgba.set([value, value, value, alpha], i * 4);
    if (value !== 0 && value !== 255) grey++;
    dark[i] = value < 128;
  }
  expect(grey, "pixels that are neither black nor white").toBe(0);
  const code = jsQR(rgba, width, height, { inversionAttempts: "dontInvert" });
  expect(code).not.toBeNull();
  const qr = code as NonNullable<typeof code>;

  // Module size from the symbol's geometry: finder-pattern centres sit (modules − 7) modules apart.
  const modules = 17 + 4 * qr.version;
  const span = qr.location.topRightFinderPattern.x - qr.location.topLeftFinderPattern.x;
  const modulePixels = Math.round(span / (modules - 7));

  // The dark bounding box: the quiet zone is everything outside it.
  let top = height;
  let left = width;
  let bottom = -1;
  let right = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!dark[y * width + x]) continue;
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
      left = Math.min(left, x);
      right = Math.max(right, x);
    }
  }
  // The symbol itself is exactly modules × modulePixels wide.
  expect(right - left + 1).toBe(modules * modulePixels);
  expect(bottom - top + 1).toBe(modules * modulePixels);
  // And the border 4 modules wide on every side is entirely light.
  const border = 4 * modulePixels;
  let darkInBorder = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inBorder = y < border || x < border || y >= height - border || x >= width - border;
      if (inBorder && dark[y * width + x]) darkInBorder++;
    }
  }
  expect(darkInBorder, "dark pixels in the 4-module quiet zone").toBe(0);

  return {
    text: qr.data,
    side: width,
    modulePixels,
    quietModules: {
      top: top / modulePixels,
      left: left / modulePixels,
      bottom: (height - 1 - bottom) / modulePixels,
      right: (width - 1 - right) / modulePixels,
    },
  };
}

describe("session QR codes", () => {
  it("are PNG data URIs with ≥ 4 px per module and a 4-module quiet zone, encoding the gateway's payload", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    const read = readQr(qr_code);

    expect(read.modulePixels).toBeGreaterThanOrEqual(4);
    for (const side of Object.values(read.quietModules)) expect(side).toBeGreaterThanOrEqual(4);
    expect(read.side).toBeGreaterThanOrEqual((21 + 8) * read.modulePixels);

    const payload = await storedQrPayload(session.id);
    expect(read.text).toBe(payload);
    expect(read.text).toMatch(PAIR_URL);
    expect(read.text.match(PAIR_URL)?.[1]).toBe(session.id);
  });

  it("the decoded URL links the session when POSTed, as a phone would", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    const url = new URL(readQr(qr_code).text);
    const res = await call("POST", url.pathname);
    expect(res.status).toBe(200);
    const shown = await call<SessionEnvelope>("GET", `/v1/chatapp/sessions/${session.id}`, { key });
    expect(shown.body.session.status).toBe("connected");
  });

  it("the qr-code endpoint serves the current payload, also after a rotation", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    const first = readQr(qr_code).text;

    const served = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${session.id}/qr-code`, {
      key,
    });
    expect(readQr(served.body.qr_code).text).toBe(first);

    await runDurableObjectAlarm(sessionStub(session.id));
    const rotated = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${session.id}/qr-code`, {
      key,
    });
    const read = readQr(rotated.body.qr_code);
    expect(read.text).not.toBe(first);
    expect(read.text).toBe(await storedQrPayload(session.id));
    expect(read.text).toMatch(PAIR_URL);
  });

  it("the QR returned by a reconnect to pending encodes the new payload", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    await call("POST", `/sandbox/sessions/${session.id}/scan`, { key });
    await call("POST", `/sandbox/sessions/${session.id}/drop`, { key, body: { logged_out: true } });
    const res = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${session.id}/reconnect`, { key });
    expect(res.body.session.status).toBe("pending");
    const read = readQr(res.body.qr_code as string);
    expect(read.text).toBe(await storedQrPayload(session.id));
    expect(read.text).not.toBe(readQr(qr_code).text);
    expect(read.modulePixels).toBeGreaterThanOrEqual(4);
  });
});
