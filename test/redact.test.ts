import { describe, expect, it } from "vitest";
import { MAX_REASON_LENGTH, REDACTED, redactReason } from "../src/lib/redact";

const PREFIX = "gateway_http_400: POST /api/sendText: ";

describe("redactReason", () => {
  it("keeps a reason without the message's text as it is", () => {
    expect(redactReason("gateway_timeout: POST /api/sendText", "Your code is 123456.")).toBe(
      "gateway_timeout: POST /api/sendText",
    );
    expect(redactReason("recipient_not_on_chatapp", null)).toBe("recipient_not_on_chatapp");
  });

  it("takes out a whole copy of the text, as sent and as JSON escapes it", () => {
    const text = 'Say "hi"\nYour code is 123456.';
    expect(redactReason(`${PREFIX}cannot send ${text}!`, text)).toBe(`${PREFIX}cannot send ${REDACTED}!`);
    const json = JSON.stringify({ text });
    expect(redactReason(`${PREFIX}${json}`, text)).toBe(`${PREFIX}{"text":"${REDACTED}"}`);
  });

  it("takes out a copy cut short, inside the reason or at its end", () => {
    const text = "Your Acme code is 123456. It expires in 10 minutes.";
    expect(redactReason(`${PREFIX}"Your Acme code is 12…" refused`, text)).toBe(
      `${PREFIX}"${REDACTED}…" refused`,
    );
    expect(redactReason(`${PREFIX}{"text":"Your Ac`, text)).toBe(`${PREFIX}{"text":"${REDACTED}`);
  });

  it("takes out the text's runs of 4 or more digits wherever they appear: a code quoted alone", () => {
    const text = "Your code is 048213 (valid 5 min, ref 12)";
    expect(redactReason(`${PREFIX}field code=048213 is invalid; 5 min; ref 12`, text)).toBe(
      `${PREFIX}field code=${REDACTED} is invalid; 5 min; ref 12`,
    );
  });

  it("leaves a short text's words alone (too common to tell from the gateway's), but not its code", () => {
    expect(redactReason(`${PREFIX}ok`, "ok")).toBe(`${PREFIX}ok`);
    expect(redactReason(`${PREFIX}bad 4821`, "4821")).toBe(`${PREFIX}bad ${REDACTED}`);
  });

  it("cuts the result to 200 characters, the last one an ellipsis", () => {
    const long = `${PREFIX}${"x".repeat(400)}`;
    const cut = redactReason(long, null);
    expect(MAX_REASON_LENGTH).toBe(200);
    expect(cut).toHaveLength(200);
    expect(cut).toBe(`${long.slice(0, 199)}…`);
    expect(redactReason(`${PREFIX}${"y".repeat(162)}`, null)).toHaveLength(200);
  });

  it("redacts before it cuts: a copy that starts before the cut does not leave its head behind", () => {
    const text = `Your code is 991122. ${"Keep it secret. ".repeat(20)}`;
    const reason = `${PREFIX}${"e".repeat(150)} ${text}`;
    const out = redactReason(reason, text);
    expect(out).not.toMatch(/Your|991122|Keep/);
    expect(out).toBe(`${PREFIX}${"e".repeat(150)} ${REDACTED}`);
  });
});
