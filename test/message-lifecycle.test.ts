import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { applyMoves } from "../src/moves/apply";
import { call, createAccount, waitFor } from "./helpers";
import {
  balanceOf,
  connectedSession,
  driveAlarmUntil,
  getMessage,
  ledgerOf,
  ms,
  sendText,
  sessionStorage,
  waitForMessages,
} from "./message-fixtures";

describe("status lifecycle", () => {
  it("moves sent → delivered → read on the sandbox's acks, with their timestamps and events", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671"]);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id]);
    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");
    const read = await getMessage(key, id);
    expect(ms(read.delivered_at)).toBeGreaterThanOrEqual(ms(read.sent_at));
    expect(ms(read.read_at)).toBeGreaterThanOrEqual(ms(read.delivered_at));
    expect(read.metadata.events?.map((e) => e.type)).toEqual(["delivered", "read"]);
  });

  it("applies acks while a long paced send is still going, not only when it ends", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const to = ["+14155552671", "+14155552672", "+14155552673", "+14155552674"];
    const res = await sendText(key, session, to, { delay_between: 1500 });
    const ids = res.body.data.messages.map((m) => m.id);
    const [first] = await waitForMessages(
      key,
      ids.slice(0, 1),
      (m) => m.status === "delivered" || m.status === "read",
    );
    expect(first!.delivered_at).not.toBeNull();
    expect((await getMessage(key, ids[3]!)).status).toBe("queued");
    await waitForMessages(key, ids);
  });

  it("never moves backwards: read before delivered fills delivered_at, a late delivered changes nothing", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155552671"]);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id]);
    const t = Date.now();
    await applyMoves(env, accountId, [{ kind: "read", target: { ids: [id] }, at: t, gatewayAt: t }]);
    const afterRead = await getMessage(key, id);
    expect(afterRead).toMatchObject({ status: "read" });
    expect(ms(afterRead.read_at)).toBe(t);
    expect(ms(afterRead.delivered_at)).toBe(t);
    await applyMoves(env, accountId, [
      { kind: "delivered", target: { ids: [id] }, at: t + 500, gatewayAt: t + 500 },
    ]);
    const afterLate = await getMessage(key, id);
    expect(afterLate).toMatchObject({
      status: "read",
      delivered_at: afterRead.delivered_at,
      read_at: afterRead.read_at,
    });
  });

  it("ignores acks for a failed message", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await sendText(key, session, ["+14155550000"]);
    const id = res.body.data.messages[0]!.id;
    await waitForMessages(key, [id]);
    const now = Date.now();
    await applyMoves(env, accountId, [
      { kind: "delivered", target: { ids: [id] }, at: now, gatewayAt: now },
      { kind: "read", target: { ids: [id] }, at: now, gatewayAt: now },
    ]);
    expect(await getMessage(key, id)).toMatchObject({ status: "failed", delivered_at: null, read_at: null });
  });

  it("holds scheduled messages until their time, then sends them", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const at = new Date(Date.now() + 3600_000);
    const res = await sendText(key, session, ["+14155552671", "+14155552672"], {
      scheduled_at: at.toISOString(),
      delay_between: 0,
    });
    expect(res.status).toBe(201);
    expect(res.body.message).toMatch(/scheduled/i);
    const ids = res.body.data.messages.map((m) => m.id);
    expect(res.body.data.messages.map((m) => m.status)).toEqual(["scheduled", "scheduled"]);
    // The session object holds both, and its dispatcher has looked at them since the last arrived
    // (each arrival wakes it now) and set its next wake-up for their time: had it meant to send
    // them early, it would have sent them in that look.
    await waitFor(
      async () => {
        const { outbox, deadlines } = await sessionStorage(session);
        expect(outbox.map((entry) => [entry.id, entry.state]).sort()).toEqual(
          ids.map((id) => [id, "pending"]).sort(),
        );
        expect(deadlines).toContainEqual({ kind: "dispatch", ref: "", due_at: at.getTime() });
        return true;
      },
      {
        reason: "the session to hold both messages and set its wake-up (the outbound queue hands them over)",
        timeoutMs: 10_000,
        intervalMs: 25,
      },
    );
    expect((await Promise.all(ids.map((id) => getMessage(key, id)))).map((m) => m.status)).toEqual([
      "scheduled",
      "scheduled",
    ]);
    // Their time comes: the alarm was armed for it.
    const sent = async () => (await Promise.all(ids.map((id) => getMessage(key, id)))).map((m) => m.sent_at);
    await driveAlarmUntil(session, async () => (await sent()).every((at) => at !== null));
  });

  it("keeps messages waiting while the session is disconnected and sends them after it reconnects", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    // Paced closer than the sandbox's delivered receipt (1 s after a send, SANDBOX_DELIVERED_MS).
    const res = await sendText(key, session, ["+14155552671", "+14155552672", "+14155552673"], {
      delay_between: 800,
    });
    const ids = res.body.data.messages.map((m) => m.id);
    await waitForMessages(key, ids.slice(0, 1));
    await call("PATCH", `/v1/chatapp/sessions/${session}/disconnect`, { key });
    // The first message's receipt falls due after the second message's turn, and the object
    // writes every send to D1 before it applies a receipt: once the first shows delivered, a send
    // of the second would show too.
    await waitForMessages(key, ids.slice(0, 1), (m) => m.status === "delivered" || m.status === "read");
    const waiting = await Promise.all(ids.map((id) => getMessage(key, id)));
    expect(waiting.slice(1).map((m) => m.status)).toEqual(["queued", "queued"]);
    const reconnected = await call<{ session: { status: string } }>(
      "PATCH",
      `/v1/chatapp/sessions/${session}/reconnect`,
      { key },
    );
    expect(reconnected.body.session.status).toBe("connected");
    const sent = await waitForMessages(key, ids);
    expect(sent.every((m) => m.sent_at !== null)).toBe(true);
  });

  for (const [action, reason] of [
    ["ban", "session_banned"],
    ["delete", "session_deleted"],
  ] as const) {
    it(`fails and refunds waiting messages when the session is ${action === "ban" ? "banned" : "deleted"}`, async () => {
      const { key, accountId } = await createAccount(1);
      const session = (await connectedSession(key)).id;
      const res = await sendText(key, session, ["+14155552671", "+14155552672", "+14155552673"], {
        delay_between: 1500,
      });
      const ids = res.body.data.messages.map((m) => m.id);
      await waitForMessages(key, ids.slice(0, 1));
      if (action === "ban") await call("POST", `/sandbox/sessions/${session}/ban`, { key, body: {} });
      else await call("DELETE", `/v1/chatapp/sessions/${session}`, { key });
      const after = await waitForMessages(key, ids, (m) => m.status !== "queued");
      expect(after.slice(1).map((m) => [m.status, m.reason])).toEqual([
        ["failed", reason],
        ["failed", reason],
      ]);
      expect(after[0]!.status).not.toBe("failed");
      expect(await balanceOf(accountId)).toBe(0.99);
      expect((await ledgerOf(accountId)).at(-1)).toMatchObject({
        kind: "refund",
        amount: 2,
        balance_after: 99,
        message_count: 2,
      });
    });
  }

  it("fails and refunds messages that wait longer than MESSAGE_TTL_SECONDS for their session", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await call("POST", `/sandbox/sessions/${session}/drop`, { key, body: {} });
    // Queue the message straight into the session object as the consumer would, while it is away.
    const later = await sendText(key, session, ["+14155552671"]);
    expect(later.status).toBe(409);
    await call("PATCH", `/v1/chatapp/sessions/${session}/reconnect`, { key });
    const res = await sendText(key, session, ["+14155552672", "+14155552673"], { delay_between: 3000 });
    const ids = res.body.data.messages.map((m) => m.id);
    await waitForMessages(key, ids.slice(0, 1));
    await call("POST", `/sandbox/sessions/${session}/drop`, { key, body: {} });
    await driveAlarmUntil(session, async () => (await getMessage(key, ids[1]!)).status === "failed");
    expect(await getMessage(key, ids[1]!)).toMatchObject({ status: "failed", reason: "message_expired" });
    expect(await balanceOf(accountId)).toBe(0.99);
  });
});

describe("incoming messages", () => {
  it("stores a sandbox inbound message as incoming and delivered, at no cost", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const res = await call<{ data: Record<string, unknown> }>(
      "POST",
      `/sandbox/sessions/${session}/inbound`,
      {
        key,
        body: { from_number: "+1 415 555 2671", type: "text", content: "hi there" },
      },
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      direction: "incoming",
      status: "delivered",
      cost: 0,
      from_number: "+14155552671",
      to_number: expect.stringMatching(/^\+1202555/),
      content: "hi there",
      chatapp_session_id: session,
    });
    expect(await balanceOf(accountId)).toBe(1);
  });

  it("refuses inbound messages on a session that is not connected, and bad bodies", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    const bad = await call("POST", `/sandbox/sessions/${session}/inbound`, {
      key,
      body: { from_number: "nope", type: "image" },
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors as object)).toEqual(["from_number"]);
    await call("PATCH", `/v1/chatapp/sessions/${session}/disconnect`, { key });
    const res = await call("POST", `/sandbox/sessions/${session}/inbound`, {
      key,
      body: { from_number: "+14155552671", type: "text", content: "hi" },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("session_not_connected");
  });
});
