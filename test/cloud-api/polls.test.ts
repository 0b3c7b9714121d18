import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf } from "../message-fixtures";
import { openWindow } from "./sessions-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// Polls on a Cloud API session (docs/messages.md, Sending messages → Polls): Meta's Cloud API has no poll
// message (its OpenAPI document, facebook/openapi business-messaging-api_v23.0.yaml, names none),
// so the gateway's capability
// (lib/gateway-kinds.ts `sendsPolls`) refuses one before anything is charged or sent.

const fake = useFakeGraph();
const TO = "+14155552671";

describe("Cloud API: polls", () => {
  it("are 422 type_not_supported_by_gateway naming type, with nothing charged and nothing sent to Meta", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { id: session, phoneNumberId } = await cloudApiSession(graph, key);
    await openWindow(graph, phoneNumberId, [TO]);
    const res = await call("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: [TO],
        type: "poll",
        poll: { question: "Which day?", options: ["Monday", "Tuesday"] },
      },
    });
    const problem = expectProblem(res, 422, "type_not_supported_by_gateway");
    expect(problem.errors).toEqual({ type: ["not sent by the cloud_api gateway"] });
    expect(await balanceOf(accountId)).toBe(10);
    const sent = await call<{ data: unknown[] }>("GET", "/v1/chatapp/messages?filter[direction]=outgoing", {
      key,
    });
    expect(sent.body.data).toEqual([]);
    expect(graph.callsOf("sendMessage")).toEqual([]);
  });
});
