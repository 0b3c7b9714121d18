import { http } from "msw";
import { beforeEach, expect } from "vitest";
import { FakeGraph, type FakeGraphOptions, type FakeNumber } from "../../fakes/cloud-api/graph.ts";
import { signBody } from "../../fakes/cloud-api/sign.ts";
import { CLOUD_API_APP_SECRET, CLOUD_API_BASE_URL } from "../gateway-config";
import { call, type SessionEnvelope, waitFor } from "../helpers";
import { network, useNetwork } from "../network";

// What the Cloud API tests share: the fake Graph API (fakes/cloud-api/graph.ts) on the test
// network, business numbers on it and their sessions, and signed webhook posts.

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

/** The business number's display form of {@link addNumber}; webhooks and the session's phone_number use its digits. */
export const DISPLAY_NUMBER = "+1 555 010 0001";

let numbers = 0;

/**
 * Adds a business number of its own to `graph`: a phone_number_id no earlier test of the file used
 * (D1 keeps their rows, and the id is unique there), a WABA and a token of its own, the display
 * number {@link DISPLAY_NUMBER}, named "Shop"; `overrides` replace any of these.
 */
export function addNumber(graph: FakeGraph, overrides: Partial<FakeNumber> = {}): FakeNumber {
  numbers += 1;
  const phoneNumberId = String(200_000_000_000_000 + numbers * 1000 + Math.floor(Math.random() * 1000));
  const number: FakeNumber = {
    phoneNumberId,
    wabaId: String(300_000_000_000_000 + numbers),
    displayPhoneNumber: DISPLAY_NUMBER,
    verifiedName: "Shop",
    accessToken: `token-${phoneNumberId}`,
    ...overrides,
  };
  graph.addNumber(number);
  return number;
}

/** POST /v1/chatapp/sessions for Cloud API number `number`; `link` replaces any of its credentials. */
export function createSession(
  key: string,
  number: FakeNumber,
  link: Partial<{ phone_number_id: string; waba_id: string; access_token: string }> = {},
) {
  const cloud_api = {
    phone_number_id: number.phoneNumberId,
    waba_id: number.wabaId,
    access_token: number.accessToken,
    ...link,
  };
  return call<SessionEnvelope & { qr_code: string | null }>("POST", "/v1/chatapp/sessions", {
    key,
    body: { gateway: "cloud_api", cloud_api },
  });
}

/** Creates a connected Cloud API session on `number`. @returns its id. */
export async function linkNumber(key: string, number: FakeNumber): Promise<string> {
  const res = await createSession(key, number);
  expect(res.status, res.text).toBe(201);
  expect(res.body.session.status).toBe("connected");
  return res.body.session.id;
}

/** A number of its own ({@link addNumber}, with `overrides`) and its connected session. */
export async function cloudApiSession(graph: FakeGraph, key: string, overrides: Partial<FakeNumber> = {}) {
  const number = addNumber(graph, overrides);
  const id = await linkNumber(key, number);
  return { id, phoneNumberId: number.phoneNumberId, wabaId: number.wabaId };
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

/**
 * Waits until the fake Graph API took `count` sends (at most 15 s): a campaign's messages reach it
 * through the campaign queue, then the outbound queue, which the runtime delivers by itself.
 */
export async function campaignSendsReached(graph: FakeGraph, count: number): Promise<void> {
  await waitFor(
    () => {
      expect(graph.sent).toHaveLength(count);
      return true;
    },
    {
      reason: `${count} sends to reach the Graph API fake (the campaign and outbound queues)`,
      timeoutMs: 15_000,
      intervalMs: 100,
    },
  );
}
