// The one-time-code row of `npm run bench`: the median time from starting an OTP to `verified` on
// the sandbox, in both modes, 20 OTPs each, one at a time.
//  - send: `POST /v1/apps/{id}/otp`, the code read on the sandbox phone as soon as it arrives
//    (`GET /sandbox/sessions/{id}/received`, polled), then `POST /v1/otp/{id}/verify`;
//  - reverse: `POST /v1/apps/{id}/otp` with `mode: reverse`, the sandbox phone sends the code back
//    (`POST /sandbox/sessions/{id}/inbound`), then `GET /v1/otp/{id}` is polled until `verified`.
// Each OTP goes to a number of its own (the per-number limit allows 5 an hour).

import { performance } from "node:perf_hooks";
import { api, connectedSession, fmt, log, median, numbers, row, sleep } from "./common.mjs";

const COUNT = 20;
const POLL_MS = 10;
const WAIT_MS = 15_000;

/** Polls `probe` every POLL_MS until it returns a value (not undefined); throws after WAIT_MS. */
async function until(what, probe) {
  const deadline = performance.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`bench otp: ${what} did not happen in ${WAIT_MS} ms`);
    await sleep(POLL_MS);
  }
}

/** One send-mode OTP to `to`, timed from the request to the verify's answer (ms). */
async function sendMode(apiKey, appId, sessionId, to) {
  const started = performance.now();
  const { json } = await api("POST", `/v1/apps/${appId}/otp`, {
    token: apiKey,
    body: { to_number: to },
    expect: 201,
  });
  const messageId = json.data.message_id;
  const code = await until("the code's arrival", async () => {
    const { json: phone } = await api(
      "GET",
      `/sandbox/sessions/${sessionId}/received?to_number=${encodeURIComponent(to)}`,
      {
        token: apiKey,
      },
    );
    const found = phone.data.find((m) => m.message_id === messageId);
    return found ? /(\d{6})/.exec(found.content)?.[1] : undefined;
  });
  await api("POST", `/v1/otp/${json.data.id}/verify`, { token: apiKey, body: { code }, expect: 200 });
  return performance.now() - started;
}

/** One reverse OTP, the sandbox phone `from` sending its code back, timed until it reads `verified` (ms). */
async function reverseMode(apiKey, appId, sessionId, from) {
  const started = performance.now();
  const { json } = await api("POST", `/v1/apps/${appId}/otp`, {
    token: apiKey,
    body: { mode: "reverse", to_number: from },
    expect: 201,
  });
  const text = new URL(json.data.link).searchParams.get("text");
  await api("POST", `/sandbox/sessions/${sessionId}/inbound`, {
    token: apiKey,
    body: { from_number: from, type: "text", content: text },
  });
  await until("the reverse OTP's verification", async () => {
    const { json: otp } = await api("GET", `/v1/otp/${json.data.id}`, { token: apiKey });
    return otp.data.status === "verified" ? true : undefined;
  });
  return performance.now() - started;
}

/** Row 13: median time from an OTP's start to `verified`, send and reverse mode. */
export async function benchOtp(apiKey) {
  log(`otp: ${COUNT} codes sent and verified, ${COUNT} reverse codes …`);
  const sessionId = await connectedSession(apiKey);
  const { json } = await api("POST", "/v1/apps", {
    token: apiKey,
    body: { name: "bench", sender_id: crypto.randomUUID(), chatapp_session_id: sessionId },
    expect: 201,
  });
  const appId = json.data.id;
  const [sendTo, reverseFrom] = [numbers(COUNT, 0), numbers(COUNT, COUNT)];
  const sent = [];
  for (const to of sendTo) sent.push(await sendMode(apiKey, appId, sessionId, to));
  const reversed = [];
  for (const from of reverseFrom) reversed.push(await reverseMode(apiKey, appId, sessionId, from));
  await api("DELETE", `/v1/apps/${appId}`, { token: apiKey, expect: 204 });
  row(
    `OTP start → verified on the sandbox, median of ${COUNT}: send (delivery + verify) / reverse (inbound message)`,
    `${fmt(median(sent), 0)} ms / ${fmt(median(reversed), 0)} ms`,
    "—",
    null,
  );
}
