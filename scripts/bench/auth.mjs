// The authentication row of `npm run bench`: what the key lookup, the per-key rate limit and the
// scope check add to a request. `GET /health` (none of them) and `GET /v1/chatapp/sessions` with a
// key lacking `sessions:read` (all three, then 403 before any handler work) are sent alternately,
// 300 each, and their medians compared.

import { api, fmt, log, median, row } from "./common.mjs";

const ROUNDS = 300;

/** Row 11: median latency of an authenticated, rate-limited, scope-checked request against /health. */
export async function benchAuthCost(apiKey) {
  log("auth: key lookup + rate limit + scope check vs /health …");
  const { json } = await api("POST", "/v1/api-keys", {
    token: apiKey,
    body: { name: "bench: no sessions scope", scopes: ["keys:read"] },
    expect: 201,
  });
  const limited = json.data.api_key;
  const health = [];
  const checked = [];
  for (let i = 0; i < ROUNDS; i++) {
    health.push((await api("GET", "/health")).ms);
    checked.push((await api("GET", "/v1/chatapp/sessions", { token: limited, expect: 403 })).ms);
  }
  await api("DELETE", `/v1/api-keys/${json.data.key.id}`, { token: apiKey, expect: 204 });
  const [h, c] = [median(health), median(checked)];
  row(
    "request latency: key lookup + rate limit + scope check (403) vs /health, median of 300 each",
    `${fmt(c, 1)} ms vs ${fmt(h, 1)} ms (+${fmt(c - h, 1)} ms)`,
    "—",
    null,
  );
}
