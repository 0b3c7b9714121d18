import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_REASON_LENGTH, REDACTED } from "../../src/lib/redact";
import { WAHA_URL } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { type Message, sendText, waitForMessages } from "../message-fixtures";
import { network, useNetwork } from "../network";
import { FakeWaha, postWahaEvent } from "./fake-waha";

// A gateway's error body is kept with the message (metadata.last_error, send_attempts, a failure
// reason) only cut and without the message's own text: a body that quotes the request would
// otherwise hand a one-time code to whoever reads the message, its events or its webhooks.

useNetwork();

const PHONE = "+14155552671";
const CONTACT = "+14155550123";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

async function connectedSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  waha.link(name, PHONE, "Ada");
  await postWahaEvent(name, "session.status", { status: "WORKING" }, { me: { id: "14155552671@c.us" } });
  return session.id;
}

/**
 * WAHA answering every text send with `status` and a body that quotes the request twice, as a
 * validation error may: the request itself, and its text inside the error message. Returns the
 * request bodies it got.
 */
function echoingRefusal(status: number): { text: string }[] {
  const requests: { text: string }[] = [];
  network.use(
    http.post(`${WAHA_URL}/api/sendText`, async ({ request }) => {
      const body = (await request.json()) as { text: string };
      requests.push(body);
      return HttpResponse.json(
        { statusCode: status, exception: { message: `cannot send "${body.text}"` }, request: body },
        { status },
      );
    }),
  );
  return requests;
}

/** The reasons a message keeps from its attempts: `reason`, `last_error`, each `send_attempts[].reason`. */
function reasonsOf(message: Message): string[] {
  const metadata = message.metadata;
  return [
    message.reason ?? "",
    metadata.last_error ?? "",
    ...(metadata.send_attempts ?? []).map((attempt) => attempt.reason),
  ].filter(Boolean);
}

describe("a gateway's error body kept with the message", () => {
  it("a refused send (4xx): the reason is cut to 200 characters and the text and its digits are taken out", async () => {
    const { key } = await createAccount();
    const id = await connectedSession(key);
    echoingRefusal(400);
    const content = `Your access code is 583920. ${"Please keep it to yourself. ".repeat(8)}`;
    const sent = await sendText(key, id, [CONTACT], { content });
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId]);
    expect(message?.status).toBe("failed");
    const reasons = reasonsOf(message as Message);
    expect(reasons).toHaveLength(3);
    for (const reason of reasons) {
      expect(reason).toMatch(/^gateway_http_400: POST \/api\/sendText: /);
      expect(reason).toContain(REDACTED);
      expect(reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
      expect(reason).not.toContain("583920");
      expect(reason).not.toContain("Your access code");
      expect(reason).not.toContain("keep it to yourself");
    }
  });

  it("an unknown outcome (5xx): last_error and the attempt keep no text either", async () => {
    const { key } = await createAccount();
    const id = await connectedSession(key);
    echoingRefusal(500);
    const sent = await sendText(key, id, [CONTACT], { content: "PIN 4417 for the door" });
    const messageId = sent.body.data.messages[0]?.id ?? "";
    const [message] = await waitForMessages(key, [messageId], (m) => m.metadata.outcome === "unknown");
    expect(message?.status).toBe("queued");
    const reasons = reasonsOf(message as Message);
    expect(reasons.length).toBeGreaterThanOrEqual(2);
    for (const reason of reasons) {
      expect(reason).toMatch(/^gateway_http_500: /);
      expect(reason).not.toMatch(/4417|PIN|for the door/);
    }
  });

  it("a one-time code quoted back by the gateway reaches neither the message, nor its events", async () => {
    const { key } = await createAccount();
    const sessionId = await connectedSession(key);
    const requests = echoingRefusal(400);
    const app = await call<{ data: { id: string } }>("POST", "/v1/apps", {
      key,
      body: {
        name: "Acme",
        sender_id: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        message_template: "Your {{app_name}} code is {{code}}.",
        chatapp_session_id: sessionId,
      },
    });
    const otp = await call<{ data: { message_id: string } }>("POST", `/v1/apps/${app.body.data.id}/otp`, {
      key,
      body: { to_number: CONTACT },
    });
    expect(otp.status).toBe(201);
    const [message] = await waitForMessages(key, [otp.body.data.message_id]);
    expect(message?.status).toBe("failed");
    // The code as the gateway got it, in the text it was sent.
    const code = /code is (\d+)\./.exec(requests[0]?.text ?? "")?.[1] ?? "";
    expect(code).toMatch(/^\d{4,10}$/);
    expect(JSON.stringify(reasonsOf(message as Message))).not.toContain(code);
    const events = await call("GET", "/v1/events?limit=100", { key });
    expect(events.status).toBe(200);
    // Uuids and timestamps out first: a code may occur in them by chance.
    const visible = `${JSON.stringify(message)}${events.text}`
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/g, "<timestamp>");
    expect(visible).toContain("gateway_http_400");
    expect(visible).not.toContain(code);
  });
});
