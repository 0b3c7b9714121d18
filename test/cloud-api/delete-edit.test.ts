import { expect, it } from "vitest";
import { call, createAccount, expectProblem } from "../helpers";
import { getMessage, type Message, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, useExampleNumber } from "./sessions-fixtures";
import { linkNumber } from "./webhooks-fixtures";

// The Cloud API cannot delete or edit a sent message (Meta's API has no such call; docs/messages.md,
// Chat actions): both are 409 `not_supported_by_gateway`, with no call to Meta and nothing recorded.

const TO = "+14155552671";

const meta = useExampleNumber();

it("refuses delete and edit of a sent text with 409 not_supported_by_gateway, calling Meta for nothing", async () => {
  const { key } = await createAccount(10);
  const sessionId = await linkNumber(key, meta.number);
  await openWindow(meta.graph, meta.number.phoneNumberId, [TO]);
  const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
    key,
    body: { chatapp_session_id: sessionId, to_number: [TO], type: "text", content: "See you at 7" },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.messages[0]?.id ?? "";
  const [sent] = await waitForMessages(key, [id]);
  expect(sent?.status).toBe("sent");
  const calls = meta.graph.callsOf("sendMessage").length;

  expectProblem(await call("DELETE", `/v1/chatapp/messages/${id}`, { key }), 409, "not_supported_by_gateway");
  expectProblem(
    await call("PATCH", `/v1/chatapp/messages/${id}`, { key, body: { content: "See you at 8" } }),
    409,
    "not_supported_by_gateway",
  );
  expect(meta.graph.callsOf("sendMessage")).toHaveLength(calls);
  const shown = (await getMessage(key, id)) as Message & { content: string };
  expect(shown.content).toBe("See you at 7");
  expect(shown.metadata).not.toHaveProperty("deleted_at");
  expect(shown.metadata).not.toHaveProperty("edits");
});
