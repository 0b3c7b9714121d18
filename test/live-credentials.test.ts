import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createDb } from "../src/db/client";
import { LiveWatchers } from "../src/sessions/live";
import { closeKeySockets } from "../src/sessions/live-revocation";
import { accountD1 } from "./databases";
import { ADMIN_TOKEN, call, createAccount, createSession, sessionStub, waitFor } from "./helpers";
import { linkUrl, Watcher } from "./live";

/** POST /v1/api-keys with `key`: a second key of the account (asserts 201). */
async function createKey(
  key: string,
  body: { scopes?: string[]; expires_at?: string } = {},
): Promise<{ id: string; secret: string }> {
  const res = await call<{ data: { key: { id: string }; api_key: string } }>("POST", "/v1/api-keys", {
    key,
    body: { name: "watcher", scopes: ["sessions:read"], ...body },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.key.id, secret: res.body.data.api_key };
}

/** The session object's `socket_expiry` deadlines: `ref` (the credential's tag) → due (epoch ms). */
async function expiryDeadlines(id: string): Promise<Record<string, number>> {
  return runInDurableObject(sessionStub(id), async (_instance, state) => {
    const rows = state.storage.sql
      .exec<{ ref: string; due_at: number }>("SELECT ref, due_at FROM deadlines WHERE kind = 'socket_expiry'")
      .toArray();
    return Object.fromEntries(rows.map((row) => [row.ref, row.due_at]));
  });
}

/** When the session object's alarm is set for (epoch ms), or null. */
async function alarmAt(id: string): Promise<number | null> {
  return runInDurableObject(sessionStub(id), (_instance, state) => state.storage.getAlarm());
}

/** The next frame of `watcher`, or "closed" when its close comes first (waits up to 5 s). */
async function nextOrClose(watcher: Watcher): Promise<string> {
  await waitFor(() => watcher.unread.length > 0 || watcher.closed !== null, {
    reason: "a frame or the close on the live socket",
    timeoutMs: 5_000,
    intervalMs: 5,
  });
  return watcher.unread.length > 0 ? (await watcher.next()).type : "closed";
}

describe("live sockets: API keys", () => {
  it("revoking a key closes the sockets it opened with 4401 `key revoked`, also after the object hibernated", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcherKey = await createKey(key);
    const { token } = await linkUrl(key, session.id);
    const [byRevoked, byOther, byToken] = [
      await Watcher.open(session.id, { key: watcherKey.secret }),
      await Watcher.open(session.id, { key }),
      await Watcher.open(session.id, { token }),
    ];
    for (const watcher of [byRevoked, byOther, byToken]) await watcher.next();
    // The socket's tags survive the instance: the revoke reaches a fresh one.
    await evictDurableObject(sessionStub(session.id));

    expect((await call("DELETE", `/v1/api-keys/${watcherKey.id}`, { key })).status).toBe(204);
    expect(await byRevoked.close()).toEqual({ code: 4401, reason: "key revoked" });
    // Sockets of other credentials stay and get the next frame.
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect((await byOther.next()).type).toBe("session.qr_updated");
    expect((await byToken.next()).type).toBe("session.qr_updated");
    expect(byOther.closed).toBeNull();
    expect(byToken.closed).toBeNull();
    expect(byRevoked.unread).toEqual([]);
  });

  it("a cascaded revoke closes the sockets of every key it revoked, and only theirs", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const parent = await createKey(key, { scopes: ["keys:write", "sessions:read"] });
    const child = (
      await call<{ data: { key: { id: string }; api_key: string } }>("POST", "/v1/api-keys", {
        key: parent.secret,
        body: { name: "child", scopes: ["sessions:read"] },
      })
    ).body.data;
    const [byParent, byChild, byOwner] = [
      await Watcher.open(session.id, { key: parent.secret }),
      await Watcher.open(session.id, { key: child.api_key }),
      await Watcher.open(session.id, { key }),
    ];
    for (const watcher of [byParent, byChild, byOwner]) await watcher.next();

    const res = await call<{ data: { revoked: string[] } }>(
      "DELETE",
      `/v1/api-keys/${parent.id}?cascade=true`,
      {
        key,
      },
    );
    expect(res.body.data.revoked).toEqual([parent.id, child.key.id]);
    expect(await byParent.close()).toEqual({ code: 4401, reason: "key revoked" });
    expect(await byChild.close()).toEqual({ code: 4401, reason: "key revoked" });
    expect(byOwner.closed).toBeNull();
  });

  it("revoking a key closes its sockets on every session of the account", async () => {
    const { key } = await createAccount();
    const [a, b] = [(await createSession(key)).session, (await createSession(key)).session];
    const watcherKey = await createKey(key);
    const watchers = [
      await Watcher.open(a.id, { key: watcherKey.secret }),
      await Watcher.open(b.id, { key: watcherKey.secret }),
    ];
    for (const watcher of watchers) await watcher.next();
    expect((await call("DELETE", `/v1/api-keys/${watcherKey.id}`, { key })).status).toBe(204);
    for (const watcher of watchers)
      expect(await watcher.close()).toEqual({ code: 4401, reason: "key revoked" });
  });

  it("the admin API's revoke closes the key's sockets with 4401 too", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const made = await call<{ data: { key: { id: string }; api_key: string } }>(
      "POST",
      `/admin/accounts/${accountId}/keys`,
      { key: ADMIN_TOKEN, body: { scopes: ["sessions:read"] } },
    );
    expect(made.status).toBe(201);
    const watcher = await Watcher.open(session.id, { key: made.body.data.api_key });
    await watcher.next();
    const revoked = await call("DELETE", `/admin/keys/${made.body.data.key.id}`, { key: ADMIN_TOKEN });
    expect(revoked.status).toBe(200);
    expect(await watcher.close()).toEqual({ code: 4401, reason: "key revoked" });
  });

  it("a key's expiry closes its sockets with 4401 `key expired` from the alarm, before any other frame", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const expiresAt = Date.now() + 5_000;
    const shortKey = await createKey(key, { expires_at: new Date(expiresAt).toISOString() });
    const watcher = await Watcher.open(session.id, { key: shortKey.secret });
    const other = await Watcher.open(session.id, { key });
    await watcher.next();
    await other.next();

    // The socket's expiry is a deadline of the session's one alarm, which it now comes first in.
    expect(await expiryDeadlines(session.id)).toEqual({ [`key:${shortKey.id}`]: expiresAt });
    expect(await alarmAt(session.id)).toBe(expiresAt);
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect(await watcher.close()).toEqual({ code: 4401, reason: "key expired" });
    expect(watcher.unread).toEqual([]);
    expect(await expiryDeadlines(session.id)).toEqual({});
    expect(other.closed).toBeNull();

    // The next deadline is the QR rotation: the key's socket is gone, the other gets it.
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect((await other.next()).type).toBe("session.qr_updated");
    expect(watcher.unread).toEqual([]);
  });

  it("sockets of keys that never expire set no deadline", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    expect(await expiryDeadlines(session.id)).toEqual({});
  });

  it("a revoke the session never heard of still stops frames: the socket closes with 4401 instead of its next frame", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const watcherKey = await createKey(key);
    const [missed, other] = [
      await Watcher.open(session.id, { key: watcherKey.secret }),
      await Watcher.open(session.id, { key }),
    ];
    await missed.next();
    await other.next();
    // Revoked in D1 only, as if the call to the session object had failed.
    await (await accountD1(accountId))
      .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(Date.now(), watcherKey.id)
      .run();

    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect((await other.next()).type).toBe("session.qr_updated");
    expect(await missed.close()).toEqual({ code: 4401, reason: "key revoked" });
    expect(missed.unread).toEqual([]);
  });
});

describe("live sockets: link tokens", () => {
  it("a link token's expiry closes its sockets with 4410 `link expired`; no QR reaches them after", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const link = await linkUrl(key, session.id, { expires_in: 60 });
    const expiresAt = Date.parse(link.expires_at);
    const [byToken, byKey] = [
      await Watcher.open(session.id, { token: link.token }),
      await Watcher.open(session.id, { key }),
    ];
    await byToken.next();
    await byKey.next();
    const tags = Object.keys(await expiryDeadlines(session.id));
    expect(tags).toHaveLength(1);
    expect(tags[0]).toMatch(/^link:[0-9a-f-]{36}$/);

    // QR rotations (every 20 s) reach both sockets until the token's expiry (60 s) comes round.
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
      const frame = await nextOrClose(byToken);
      seen.push(frame);
      if (frame === "closed") break;
      expect((await byKey.next()).type).toBe("session.qr_updated");
    }
    expect(seen).toEqual(["session.qr_updated", "session.qr_updated", "session.qr_updated", "closed"]);
    expect(await byToken.close()).toEqual({ code: 4410, reason: "link expired" });
    expect(byToken.unread).toEqual([]);
    expect(await expiryDeadlines(session.id)).toEqual({});
    expect(await alarmAt(session.id)).toBeGreaterThan(expiresAt);

    // The next rotation reaches the key's socket only.
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect((await byKey.next()).type).toBe("session.qr_updated");
    expect(byToken.unread).toEqual([]);
  });

  it("a revoke of the links the session never heard of still stops QR frames: 4403 instead", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const [byToken, byKey] = [
      await Watcher.open(session.id, { token }),
      await Watcher.open(session.id, { key }),
    ];
    await byToken.next();
    await byKey.next();
    await (await accountD1(accountId))
      .prepare("UPDATE link_tokens SET revoked_at = ? WHERE session_id = ?")
      .bind(Date.now(), session.id)
      .run();

    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect((await byKey.next()).type).toBe("session.qr_updated");
    expect(await byToken.close()).toEqual({ code: 4403, reason: "link revoked" });
    expect(byToken.unread).toEqual([]);
  });
});

describe("live sockets: a deleted session", () => {
  it("every socket, by key or by token, gets session.deleted and then closes with 4404, also after hibernation", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const watchers = [await Watcher.open(session.id, { key }), await Watcher.open(session.id, { token })];
    for (const watcher of watchers) await watcher.next();
    await evictDurableObject(sessionStub(session.id));

    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}`, { key })).status).toBe(200);
    for (const watcher of watchers) {
      expect(await watcher.next()).toEqual({ type: "session.deleted", id: session.id });
      expect(await watcher.close()).toEqual({ code: 4404, reason: "session deleted" });
      expect(watcher.unread).toEqual([]);
    }
  });
});

describe("live sockets: when a check cannot be made", () => {
  it("D1 unreadable: frames still go, expiries still close (4401), and the failure is logged", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const expiresAt = Date.now() + 60_000;
    const shortKey = await createKey(key, { expires_at: new Date(expiresAt).toISOString() });
    const [expiring, lasting] = [
      await Watcher.open(session.id, { key: shortKey.secret }),
      await Watcher.open(session.id, { key }),
    ];
    await expiring.next();
    await lasting.next();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await runInDurableObject(sessionStub(session.id), async (_instance, state) => {
        const down = new LiveWatchers(state, async () => {
          throw new Error("D1 is down");
        });
        // As at a moment past the short key's expiry.
        await down.screen(expiresAt + 1);
      });
      expect(logged.mock.calls.map((call) => JSON.parse(String(call[0])))).toEqual([
        { level: "error", event: "live_check_failed", error: "Error: D1 is down" },
      ]);
    } finally {
      logged.mockRestore();
    }
    expect(await expiring.close()).toEqual({ code: 4401, reason: "key expired" });
    expect(lasting.closed).toBeNull();
  });

  it("the revoke's calls to the sessions never throw: a failure is logged and 0 sockets are counted", async () => {
    const { accountId } = await createAccount();
    const broken = { prepare: () => ({}) } as unknown as D1Database;
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(await closeKeySockets(env, createDb(broken), accountId, ["k1", "k2"])).toBe(0);
      expect(logged.mock.calls.map((call) => JSON.parse(String(call[0])))).toEqual([
        {
          level: "error",
          event: "live_close_failed",
          account: accountId,
          keys: ["k1", "k2"],
          error: expect.any(String),
        },
      ]);
    } finally {
      logged.mockRestore();
    }
  });
});
