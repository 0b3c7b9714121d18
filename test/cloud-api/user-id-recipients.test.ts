import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, storedMessageCount } from "../message-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// README, Contacts: a gateway sends to the kinds of user id it declares (lib/gateway-kinds.ts
// `sendsToUserIds`); the Cloud API sends to business-scoped user ids, not to linked-device ids.

const fake = useFakeGraph();

describe("a Cloud API session's recipients", () => {
  it("refuses a LID with 422 recipient_not_supported naming it, before anything is charged or stored", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { id: session } = await cloudApiSession(graph, key);
    const before = await balanceOf(accountId);
    const res = await call<{ recipients: string[] }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_user_id: ["120363025246125888@lid"],
        type: "template",
        template: { name: "hello_world", language: "en_US" },
      },
    });
    expectProblem(res, 422, "recipient_not_supported");
    expect(res.body.recipients).toEqual(["120363025246125888@lid"]);
    expect(await balanceOf(accountId)).toBe(before);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});
