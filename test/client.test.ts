import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type ChatappClient, createChatappClient, type Problem } from "../client/index.js";
import { createAccount } from "./helpers";

// The typed client (client/) driving the real app: openapi-fetch over the types generated from
// the committed openapi.json, with the Worker's own fetch handler as its transport.

function clientFor(apiKey: string): ChatappClient {
  return createChatappClient({
    baseUrl: "http://localhost",
    apiKey,
    fetch: (request) => exports.default.fetch(request),
  });
}

/** A session linked through the sandbox's scan, by the client. */
async function linkedSession(client: ChatappClient): Promise<string> {
  const created = await client.POST("/v1/chatapp/sessions");
  expect(created.response.status).toBe(201);
  const id = created.data?.session.id ?? "";
  const scanned = await client.POST("/sandbox/sessions/{id}/scan", { params: { path: { id } }, body: {} });
  expect(scanned.data?.session.status).toBe("connected");
  return id;
}

describe("the typed client", () => {
  it("links a session through the sandbox and shows it", async () => {
    const client = clientFor((await createAccount()).key);
    const id = await linkedSession(client);
    const shown = await client.GET("/v1/chatapp/sessions/{id}", { params: { path: { id } } });
    expect(shown.data?.session).toMatchObject({ id, status: "connected" });
    expect(shown.data?.session.phone_number).toMatch(/^\+\d+$/);
  });

  it("sends to two recipients, then lists them with a numeric limit", async () => {
    const client = clientFor((await createAccount(1)).key);
    const sessionId = await linkedSession(client);
    const sent = await client.POST("/v1/chatapp/messages", {
      body: {
        chatapp_session_id: sessionId,
        to_number: ["+14155552671", "+14155552672"],
        type: "text",
        content: "Hello from the client",
      },
    });
    expect(sent.response.status).toBe(201);
    expect(sent.data?.data.messages.map((m) => [m.to_number, m.status])).toEqual([
      ["+14155552671", "queued"],
      ["+14155552672", "queued"],
    ]);
    expect(sent.data?.data.new_balance).toBe(0.98);
    const page = await client.GET("/v1/chatapp/messages", { params: { query: { limit: 1 } } });
    expect(page.data?.data).toHaveLength(1);
    expect(page.data?.meta.per_page).toBe(1);
    expect(page.data?.meta.next_cursor).toEqual(expect.any(String));
  });

  it("creates an app, sends a one-time code and refuses a wrong one", async () => {
    const client = clientFor((await createAccount()).key);
    const sessionId = await linkedSession(client);
    const app = await client.POST("/v1/apps", {
      body: {
        name: "Shop",
        sender_id: crypto.randomUUID(),
        message_template: "Your {{app_name}} code is {{code}}.",
        chatapp_session_id: sessionId,
      },
    });
    expect(app.response.status).toBe(201);
    const appId = app.data?.data.id ?? "";
    const otp = await client.POST("/v1/apps/{id}/otp", {
      params: { path: { id: appId } },
      body: { to_number: "+14155552671" },
    });
    expect(otp.data?.data).toMatchObject({ app_id: appId, to_number: "+14155552671", status: "pending" });
    const wrong = await client.POST("/v1/otp/{id}/verify", {
      params: { path: { id: otp.data?.data.id ?? "" } },
      body: { code: "000000" },
    });
    const problem: Problem | undefined = wrong.error;
    expect(wrong.response.status).toBe(422);
    expect(problem).toMatchObject({ status: 422, code: "otp_invalid" });
  });

  it("gives a wrong key's 401 as a typed problem with its request id", async () => {
    const client = clientFor(`sk_${"A".repeat(43)}`);
    const res = await client.GET("/v1/chatapp/sessions");
    expect(res.data).toBeUndefined();
    expect(res.response.status).toBe(401);
    const problem: Problem | undefined = res.error;
    expect(problem).toMatchObject({ status: 401, code: "unauthenticated" });
    expect(problem?.request_id).toBe(res.response.headers.get("x-request-id"));
  });
});
