import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { EVENTS } from "../event-fixtures";
import { call, createAccount, sessionStub, showSession } from "../helpers";
import { balanceOf, getMessage, type SendResponse, waitForMessages } from "../message-fixtures";
import { openWindow, TOKEN, useExampleNumber } from "./sessions-fixtures";
import { linkNumber } from "./webhooks-fixtures";

// A token Meta refuses later (OAuthException 190, Meta's "Error codes → Authorization errors"):
// the session moves to `failed` with reason `token_invalid`, with its `session.status_changed`
// event, whether a send or the periodic check finds out.

const TO = ["+14155552671", "+14155552672"];

const meta = useExampleNumber();

/** The `session.status_changed` events of the account, as [status, reason]. */
async function statusEvents(accountId: string): Promise<[string, string | null][]> {
  const rows = await (await accountD1(accountId))
    .prepare(
      `SELECT snapshot FROM ${EVENTS} WHERE account_id = ? AND type = 'session.status_changed' ORDER BY created_at, id`,
    )
    .bind(accountId)
    .all<{ snapshot: string }>();
  return rows.results.map((row) => {
    const snapshot = JSON.parse(row.snapshot) as { status: string; reason: string | null };
    return [snapshot.status, snapshot.reason];
  });
}

describe("a token Meta refuses on a send", () => {
  it("fails the message (token_invalid, refunded) and the session (failed, token_invalid); nothing else is sent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, TO);
    meta.graph.revokeToken(TOKEN);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session,
        to_number: TO,
        type: "text",
        content: "Hello",
        delay_between: 1000,
      },
    });
    expect(res.status, res.text).toBe(201);
    const [first, second] = res.body.data.messages.map((m) => m.id);

    const [failed] = await waitForMessages(key, [first ?? ""], (m) => m.status === "failed");
    expect(failed).toMatchObject({ status: "failed", reason: "token_invalid" });
    await expect.poll(async () => (await showSession(key, session)).status).toBe("failed");
    expect(await showSession(key, session)).toMatchObject({ status: "failed", reason: "token_invalid" });
    expect(await statusEvents(accountId)).toEqual([
      ["connected", null],
      ["failed", "token_invalid"],
    ]);

    // The other message waits, as with any failed session: never sent with the refused token.
    await runDurableObjectAlarm(sessionStub(session));
    expect(await getMessage(key, second ?? "")).toMatchObject({ status: "queued" });
    expect(meta.graph.callsOf("sendMessage").map((s) => s.body?.biz_opaque_callback_data)).toEqual([first]);
    // One refund: the failed message's; the waiting one stays charged until its own outcome.
    expect(await balanceOf(accountId)).toBe(9.99);
  });
});

describe("a token Meta refuses at the periodic check", () => {
  it("GET /v1/chatapp/sessions/{id}/gateway: the check moves the session to failed token_invalid", async () => {
    const { key, accountId } = await createAccount();
    const session = await linkNumber(key, meta.number);
    await openWindow(meta.graph, meta.number.phoneNumberId, TO);
    meta.graph.revokeToken(TOKEN);

    const res = await call<{ health: { gateway: string; gateway_state: string } }>(
      "GET",
      `/v1/chatapp/sessions/${session}/gateway`,
      { key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.health).toMatchObject({ gateway: "cloud_api", gateway_state: "failed" });
    expect(await showSession(key, session)).toMatchObject({ status: "failed", reason: "token_invalid" });
    expect(await statusEvents(accountId)).toEqual([
      ["connected", null],
      ["failed", "token_invalid"],
    ]);
  });

  it("the scheduled check (gateway_check deadline) does it too, and one that Meta still takes changes nothing", async () => {
    const { key, accountId } = await createAccount();
    const session = await linkNumber(key, meta.number);
    // The check falls due (the driven alarm runs at the time it was armed for): Meta takes the token.
    await runDurableObjectAlarm(sessionStub(session));
    expect(await showSession(key, session)).toMatchObject({ status: "connected" });

    meta.graph.revokeToken(TOKEN);
    await runDurableObjectAlarm(sessionStub(session));
    expect(await showSession(key, session)).toMatchObject({ status: "failed", reason: "token_invalid" });
    expect(await statusEvents(accountId)).toEqual([
      ["connected", null],
      ["failed", "token_invalid"],
    ]);
  });
});
