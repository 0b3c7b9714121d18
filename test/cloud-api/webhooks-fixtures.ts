import { http } from "msw";
import { beforeEach } from "vitest";
import { FakeGraph, type FakeGraphOptions } from "../../fakes/cloud-api/graph.ts";
import { signBody } from "../../fakes/cloud-api/sign.ts";
import { CLOUD_API_APP_SECRET, CLOUD_API_BASE_URL } from "../gateway-config";
import { call } from "../helpers";
import { network, useNetwork } from "../network";

// What the Cloud API tests share: the fake Graph API (fakes/cloud-api/graph.ts) on the test
// network, and signed webhook posts. Numbers and sessions: sessions-fixtures.ts.

/** A fresh fake Graph API on the test network for every test; read it through the getter. */
export function useFakeGraph(options: Omit<FakeGraphOptions, "appSecret"> = {}): () => FakeGraph {
  useNetwork();
  let graph = new FakeGraph({ appSecret: CLOUD_API_APP_SECRET, ...options });
  beforeEach(() => {
    graph = new FakeGraph({ appSecret: CLOUD_API_APP_SECRET, ...options });
    network.use(http.all(`${CLOUD_API_BASE_URL}/*`, ({ request }) => graph.handle(request)));
  });
  return () => graph;
}

/** Posts `body` to the Cloud API webhook, signed with the app secret unless `signature` says otherwise. */
export async function postWebhook(body: string | object, signature?: string | null) {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const sig = signature === undefined ? await signBody(CLOUD_API_APP_SECRET, raw) : signature;
  const headers: Record<string, string> = {};
  if (sig !== null) headers["X-Hub-Signature-256"] = sig;
  return call<{ success: boolean; ignored: boolean }>("POST", "/gateway/cloud-api", { body: raw, headers });
}

/** Posts every webhook the fake has queued, in order (or in the order `reorder` gives). */
export async function deliverWebhooks(
  graph: FakeGraph,
  reorder: (bodies: { body: string; signature: string }[]) => { body: string; signature: string }[] = (b) =>
    b,
) {
  const posted = [];
  for (const hook of reorder(await graph.takeWebhooks())) {
    const res = await postWebhook(hook.body, hook.signature);
    if (res.status !== 200) throw new Error(`webhook answered ${res.status} ${res.text}`);
    posted.push({ ...hook, res });
  }
  return posted;
}

/** A `messages` change body for number `phoneNumberId` (`WebhookPayload` > `Entry` > `Change`). */
export function messagesChange(
  phoneNumberId: string,
  value: Record<string, unknown>,
  wabaId = "300000000000000",
) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "15550100001", phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

/** A `Statuses` entry. `at` in epoch seconds (default now). */
export function status(
  id: string,
  value: "sent" | "delivered" | "read" | "failed",
  extra: Record<string, unknown> = {},
  at = Math.floor(Date.now() / 1000),
) {
  return { id, status: value, timestamp: String(at), recipient_id: "14155550123", ...extra };
}
