import { http } from "msw";
import { beforeEach } from "vitest";
import { FakeGraph, type FakeNumber, OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { network } from "../network";

/** The Graph API origin the fake stands in for, with the document's version. */
export const GRAPH = "https://graph.facebook.com/v23.0";
export const APP_SECRET = "test-cloud-api-app-secret-0123456789";
export const NUMBER: FakeNumber = {
  phoneNumberId: "100000000000001",
  wabaId: "200000000000001",
  displayPhoneNumber: "+1 555 010 0001",
  verifiedName: "Sandbox Business",
  qualityRating: "YELLOW",
  throughputLevel: "HIGH",
  accessToken: "test-cloud-api-token",
};
/** A second number, of another WABA, with its own token. */
export const OTHER: FakeNumber = {
  phoneNumberId: "100000000000002",
  wabaId: "200000000000002",
  displayPhoneNumber: "+1 555 010 0002",
  verifiedName: "Other Business",
  accessToken: "test-cloud-api-other-token",
};
/** A fixed clock: 2025-07-01T00:00:00Z. */
export const NOW_MS = Date.UTC(2025, 6, 1);

/** A valid text message body (recipient_type included, as the document requires). */
export const TEXT = {
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to: "+4915112345678",
  type: "text",
  text: { body: "Hello" },
};

/** A send of the seeded otp_code template with its copy-code button (Meta's authentication templates guide). */
export const OTP_TEMPLATE = {
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to: "4915112345678",
  type: "template",
  template: {
    name: "otp_code",
    language: { policy: "deterministic", code: "en_US" },
    components: [
      { type: "body", parameters: [{ type: "text", text: "482913" }] },
      { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "482913" }] },
    ],
  },
};

/**
 * A fresh fake per test, reachable at https://graph.facebook.com through the test network, with
 * {@link NUMBER}, {@link OTHER} and an APPROVED otp_code template (en_US, AUTHENTICATION).
 */
export function useFakeGraph(): { graph: FakeGraph } {
  const holder = { graph: new FakeGraph({ appSecret: APP_SECRET, now: () => NOW_MS }) };
  beforeEach(() => {
    const graph = new FakeGraph({ appSecret: APP_SECRET, now: () => NOW_MS });
    graph.addNumber(NUMBER);
    graph.addNumber(OTHER);
    graph.addTemplate({ wabaId: NUMBER.wabaId, ...OTP_CODE_TEMPLATE });
    holder.graph = graph;
    network.use(http.all("https://graph.facebook.com/*", ({ request }) => graph.handle(request)));
  });
  return holder;
}

/** Calls the Graph API as a gateway would: JSON body, bearer token (NUMBER's unless given). */
export async function callGraph(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = NUMBER.accessToken,
  signal?: AbortSignal,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${GRAPH}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  return { status: response.status, json: await response.json() };
}
