import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { call, createAccount, createSession, expectProblem } from "./helpers";

// An app's channels, failover_after_seconds and reverse_price (docs/otp.md, Channels and
// failover; Reverse OTP): how they are set, validated and stored.

const SENDER = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

interface App {
  id: string;
  chatapp_session_id?: string;
  channels: string[];
  failover_after_seconds: number;
  reverse_price: number;
}

let key: string;
let accountId: string;
let sessions: string[];

beforeEach(async () => {
  ({ key, accountId } = await createAccount());
  sessions = [];
  for (let i = 0; i < 6; i++) sessions.push((await createSession(key)).session.id);
});

async function createApp(body: Record<string, unknown>) {
  return call<{ data: App }>("POST", "/v1/apps", { key, body: { name: "Acme", sender_id: SENDER, ...body } });
}

async function patchApp(id: string, body: Record<string, unknown>) {
  return call<{ data: App }>("PATCH", `/v1/apps/${id}`, { key, body });
}

/** The stored columns, read straight from D1. */
async function stored(id: string) {
  return (await accountD1(accountId))
    .prepare(
      "SELECT chatapp_session_id, channels, failover_after_seconds, reverse_price FROM apps WHERE id = ?",
    )
    .bind(id)
    .first<{
      chatapp_session_id: string | null;
      channels: string | null;
      failover_after_seconds: number;
      reverse_price: number;
    }>();
}

describe("channels", () => {
  it("stores a list in order; chatapp_session_id is its first", async () => {
    const list = [sessions[2], sessions[0], sessions[1]] as string[];
    const res = await createApp({ channels: list, failover_after_seconds: 30, reverse_price: 0.05 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      chatapp_session_id: list[0],
      channels: list,
      failover_after_seconds: 30,
      reverse_price: 0.05,
    });
    expect(await stored(res.body.data.id)).toEqual({
      chatapp_session_id: list[0],
      channels: JSON.stringify(list),
      failover_after_seconds: 30,
      reverse_price: 5,
    });
    const shown = await call<{ data: App }>("GET", `/v1/apps/${res.body.data.id}`, { key });
    expect(shown.body.data.channels).toEqual(list);
  });

  it("takes chatapp_session_id alone as a one-channel list", async () => {
    const res = await createApp({ chatapp_session_id: sessions[3] });
    expect(res.body.data.channels).toEqual([sessions[3]]);
    const patched = await patchApp(res.body.data.id, { chatapp_session_id: sessions[4] });
    expect(patched.body.data).toMatchObject({ chatapp_session_id: sessions[4], channels: [sessions[4]] });
  });

  it("accepts both when chatapp_session_id is the first channel, and refuses them otherwise", async () => {
    const ok = await createApp({ chatapp_session_id: sessions[0], channels: [sessions[0], sessions[1]] });
    expect(ok.body.data.channels).toEqual([sessions[0], sessions[1]]);
    const bad = await createApp({ chatapp_session_id: sessions[1], channels: [sessions[0], sessions[1]] });
    const problem = expectProblem(bad, 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual(["chatapp_session_id"]);
  });

  it("clears the list with null, either field", async () => {
    const app = (await createApp({ channels: [sessions[0], sessions[1]] })).body.data;
    const cleared = await patchApp(app.id, { channels: null });
    expect(cleared.body.data.channels).toEqual([]);
    expect(cleared.body.data).not.toHaveProperty("chatapp_session_id");
    await patchApp(app.id, { channels: [sessions[0], sessions[1]] });
    const again = await patchApp(app.id, { chatapp_session_id: null });
    expect(again.body.data.channels).toEqual([]);
    expect(await stored(app.id)).toMatchObject({ chatapp_session_id: null, channels: null });
  });

  it("keeps the list when a PATCH names neither field", async () => {
    const app = (await createApp({ channels: [sessions[0], sessions[1]] })).body.data;
    const patched = await patchApp(app.id, { failover_after_seconds: 5 });
    expect(patched.body.data).toMatchObject({
      channels: [sessions[0], sessions[1]],
      failover_after_seconds: 5,
    });
  });

  it("refuses an empty list, more than 5, a repeat, a non-uuid and another account's session", async () => {
    const { key: otherKey } = await createAccount();
    const foreign = (await createSession(otherKey)).session.id;
    const cases: [unknown, string][] = [
      [[], "channels"],
      [sessions, "channels"],
      [[sessions[0], sessions[0]], "channels"],
      [["not-a-uuid"], "channels.0"],
      [[sessions[0], foreign], "channels.1"],
    ];
    for (const [channels, field] of cases) {
      const res = await createApp({ channels });
      const problem = expectProblem(res, 422, "validation_failed");
      expect(Object.keys(problem.errors as object), JSON.stringify(channels)).toEqual([field]);
    }
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM apps WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });
});

describe("failover_after_seconds and reverse_price", () => {
  it("default to 15 s and 0", async () => {
    const res = await createApp({});
    expect(res.body.data).toMatchObject({ failover_after_seconds: 15, reverse_price: 0, channels: [] });
  });

  it("accept the bounds 5 and 300 and refuse beyond them", async () => {
    expect((await createApp({ failover_after_seconds: 5 })).status).toBe(201);
    expect((await createApp({ failover_after_seconds: 300 })).status).toBe(201);
    for (const value of [4, 301, 7.5, "15"]) {
      const res = await createApp({ failover_after_seconds: value });
      expect(Object.keys(expectProblem(res, 422, "validation_failed").errors as object)).toEqual([
        "failover_after_seconds",
      ]);
    }
  });

  it("refuse a negative price or one with 3 decimals", async () => {
    for (const value of [-1, 0.001]) {
      const res = await createApp({ reverse_price: value });
      expect(Object.keys(expectProblem(res, 422, "validation_failed").errors as object)).toEqual([
        "reverse_price",
      ]);
    }
  });
});
