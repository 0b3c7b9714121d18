import { describe, expect, it } from "vitest";
import { OTP_CODE_TEMPLATE } from "../../fakes/cloud-api/graph.ts";
import { call, createAccount, expectProblem } from "../helpers";
import { balanceOf, storedMessageCount } from "../message-fixtures";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// docs/contacts.md, Contacts: a gateway sends to the kinds of user id it declares (lib/gateway-kinds.ts
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

describe("an authentication template with a code button", () => {
  it("to a BSUID is 422 recipient_not_supported before any charge (Meta would answer 131062)", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(10);
    const { id: session, wabaId } = await cloudApiSession(graph, key);
    graph.addTemplate({ wabaId, ...OTP_CODE_TEMPLATE });
    // The session's templates as Meta lists them (otp_code has a copy-code button).
    const listed = await call<{ data: { name: string }[] }>(
      "GET",
      `/v1/chatapp/sessions/${session}/templates`,
      {
        key,
      },
    );
    expect(listed.body.data.map((t) => t.name)).toContain("otp_code");
    const before = await balanceOf(accountId);
    const res = await call<{ recipients: string[] }>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_user_id: ["US.13491208655302741918"],
        type: "template",
        template: {
          name: "otp_code",
          language: "en_US",
          variables: { body: ["123456"], buttons: [{ index: 0, sub_type: "url", parameter: "123456" }] },
        },
      },
    });
    expectProblem(res, 422, "recipient_not_supported");
    expect(res.body.recipients).toEqual(["US.13491208655302741918"]);
    expect(await balanceOf(accountId)).toBe(before);
    expect(await storedMessageCount(accountId)).toBe(0);
  });
});
