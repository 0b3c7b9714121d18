import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  call,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  sessionStub,
  showSession,
  TIMESTAMP,
} from "./helpers";
import { type Frame, linkUrl, openLive, servedQr, Watcher } from "./live";

/** wrangler.toml default. */
const QR_ROTATE_SECONDS = 20;

const scan = (key: string, id: string, body: unknown = { phone_number: "+14155552671" }) =>
  call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/scan`, { key, body });

async function rotateDue(id: string): Promise<number> {
  return runInDurableObject(sessionStub(id), async (_instance, state) => {
    const row = state.storage.sql
      .exec<{ due_at: number }>("SELECT due_at FROM deadlines WHERE kind = 'qr_rotate'")
      .toArray()[0];
    return row?.due_at ?? 0;
  });
}

describe("live session events: frames", () => {
  it("the first frame is a snapshot: the session as GET shows it, the current QR and its expiry", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    const first = await watcher.next();
    expect(first).toEqual({
      type: "session.snapshot",
      session: await showSession(key, session.id),
      qr_code: await servedQr(key, session.id),
      expires_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Date.parse(first.expires_at as string)).toBe(await rotateDue(session.id));
    expect(watcher.unread).toEqual([]);
  });

  it("a QR rotation sends session.qr_updated with the new QR code and its expiry", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    const snapshot = await watcher.next();
    const due = await rotateDue(session.id);

    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    const rotated = await watcher.next();
    expect(rotated).toEqual({
      type: "session.qr_updated",
      session: await showSession(key, session.id),
      qr_code: await servedQr(key, session.id),
      expires_at: expect.stringMatching(TIMESTAMP),
    });
    expect(rotated.qr_code).not.toBe(snapshot.qr_code);
    expect(Date.parse(rotated.expires_at as string)).toBe(due + QR_ROTATE_SECONDS * 1000);
    // The same data as the session.qr_updated event records.
    const events = await call<{ data: { type: string; data: { qr_code: string } }[] }>(
      "GET",
      "/v1/events?filter[type]=session.qr_updated",
      { key },
    );
    expect(events.body.data[0]?.data.qr_code).toBe(rotated.qr_code);
  });

  it("a sandbox scan sends session.status_changed with the connected session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    expect((await scan(key, session.id)).status).toBe(200);
    const changed = await watcher.next();
    expect(changed).toEqual({ type: "session.status_changed", session: await showSession(key, session.id) });
    expect(changed.session).toMatchObject({ status: "connected", phone_number: "+14155552671" });
  });

  it("every status move is a frame; a move to pending carries the new QR code", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    await scan(key, session.id);
    const watcher = await Watcher.open(session.id, { key });
    expect((await watcher.next()).session?.status).toBe("connected");

    await call("POST", `/sandbox/sessions/${session.id}/drop`, { key, body: { logged_out: true } });
    const dropped = await watcher.next();
    expect(dropped).toEqual({ type: "session.status_changed", session: await showSession(key, session.id) });
    expect(dropped.session).toMatchObject({ status: "disconnected", reason: "connection_lost" });

    const reconnected = await call<SessionEnvelope>("PATCH", `/v1/chatapp/sessions/${session.id}/reconnect`, {
      key,
    });
    const pending = await watcher.next();
    expect(pending).toEqual({
      type: "session.status_changed",
      session: reconnected.body.session,
      qr_code: reconnected.body.qr_code,
      expires_at: expect.stringMatching(TIMESTAMP),
    });
    expect(watcher.unread).toEqual([]);
  });

  it("a pairing code issued sends session.pairing_code", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    const res = await call<{ pairing_code: string }>(
      "POST",
      `/v1/chatapp/sessions/${session.id}/pairing-code`,
      {
        key,
        body: { phone_number: "+1 415 555 2672" },
      },
    );
    expect(await watcher.next()).toEqual({
      type: "session.pairing_code",
      pairing_code: res.body.pairing_code,
      phone_number: "+14155552672",
      issued_at: expect.stringMatching(TIMESTAMP),
    });
  });

  it("two watchers of one session each get every frame, in the same order", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const [a, b] = [await Watcher.open(session.id, { key }), await Watcher.open(session.id, { key })];
    await runDurableObjectAlarm(sessionStub(session.id));
    await scan(key, session.id);
    const types = ["session.snapshot", "session.qr_updated", "session.status_changed"];
    const framesOf = async (w: Watcher) => {
      const frames: Frame[] = [];
      for (const _ of types) frames.push(await w.next());
      return frames;
    };
    const [fromA, fromB] = [await framesOf(a), await framesOf(b)];
    expect(fromA.map((f) => f.type)).toEqual(types);
    expect(fromB).toEqual(fromA);
  });

  it("deleting the session sends session.deleted and closes every socket with 4404 `session deleted`", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const [a, b] = [await Watcher.open(session.id, { key }), await Watcher.open(session.id, { key })];
    await a.next();
    await b.next();
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}`, { key })).status).toBe(200);
    for (const watcher of [a, b]) {
      expect(await watcher.next()).toEqual({ type: "session.deleted", id: session.id });
      expect(await watcher.close()).toEqual({ code: 4404, reason: "session deleted" });
    }
    const after = await openLive(session.id, { key });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { code: string }).code).toBe("not_found");
  });

  it("answers `ping` with `pong` and ignores other messages", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    watcher.socket.send("hello");
    watcher.socket.send("ping");
    // Only the pong comes back.
    expect(await watcher.next()).toEqual({ type: "text", text: "pong" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(watcher.unread).toEqual([]);
  });
});

describe("live session events: hibernation", () => {
  it("the socket outlives the object's eviction: a frame after the wake-up reaches it", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    const stub = sessionStub(session.id);
    // The instance is torn down (its memory gone); the socket hibernates with the object.
    await evictDurableObject(stub);
    expect(watcher.closed).toBeNull();
    // The new instance finds the socket through ctx.getWebSockets(), with its audience tag.
    const sockets = await runInDurableObject(stub, (_instance, state) => ({
      all: state.getWebSockets().length,
      account: state.getWebSockets("account").length,
    }));
    expect(sockets).toEqual({ all: 1, account: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const rotated = await watcher.next();
    expect(rotated.type).toBe("session.qr_updated");
    expect(rotated.qr_code).toBe(await servedQr(key, session.id));
  });
});

describe("live session events: authentication and errors", () => {
  it("without a key is 401", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await openLive(session.id, {});
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
  });

  it("another account's session, an unknown one and a malformed id are 404 not_found", async () => {
    const { key } = await createAccount();
    const theirs = await createAccount();
    const { session } = await createSession(theirs.key);
    for (const id of [session.id, "00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const res = await openLive(id, { key });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe("not_found");
    }
  });

  it("without Upgrade: websocket is 426 upgrade_required", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call("GET", `/v1/chatapp/sessions/${session.id}/live`, { key });
    const problem = expectProblem(res, 426, "upgrade_required");
    expect(problem.title).toBe("Upgrade required");
    expect(res.headers.get("upgrade")).toBe("websocket");
  });

  it("a link token opens its own session, with the public view of the session in frames", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const watcher = await Watcher.open(session.id, { token });
    const snapshot = await watcher.next();
    const shown = await showSession(key, session.id);
    expect(snapshot).toEqual({
      type: "session.snapshot",
      session: {
        id: session.id,
        status: "pending",
        reason: null,
        phone_number: null,
        updated_at: shown.updated_at,
      },
      qr_code: await servedQr(key, session.id),
      expires_at: expect.stringMatching(TIMESTAMP),
    });
    // A watcher with the key sees the whole session in the same change.
    const keyed = await Watcher.open(session.id, { key });
    await keyed.next();
    await scan(key, session.id);
    const [publicFrame, fullFrame] = [await watcher.next(), await keyed.next()];
    expect(fullFrame.session).toEqual(await showSession(key, session.id));
    expect(publicFrame).toEqual({
      type: "session.status_changed",
      session: {
        id: session.id,
        status: "connected",
        reason: null,
        phone_number: "+14155552671",
        updated_at: fullFrame.session?.updated_at,
      },
    });
    expect(JSON.stringify(watcher.frames)).not.toContain(shown.account_id);
  });

  it("a link token reaches no other session (404, as unknown), and a bad token is refused", async () => {
    const { key } = await createAccount();
    const mine = (await createSession(key)).session;
    const other = (await createSession(key)).session;
    const { token } = await linkUrl(key, mine.id);
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${other.id}/live?token=${token}`),
      404,
      "not_found",
    );
    const res = await openLive(other.id, { token });
    expect(res.status).toBe(404);
    expect(res.webSocket).toBeNull();
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${mine.id}/live?token=${"A".repeat(43)}`),
      404,
      "link_not_found",
    );
    // The token opens the live route only: every other /v1 route still needs the key.
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${mine.id}?token=${token}`),
      401,
      "unauthenticated",
    );
  });

  it("revoking the links refuses the token (410) and closes its sockets with 4403; key sockets stay", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const [byToken, byKey] = [
      await Watcher.open(session.id, { token }),
      await Watcher.open(session.id, { key }),
    ];
    await byToken.next();
    await byKey.next();
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}/link-url`, { key })).status).toBe(204);
    expect(await byToken.close()).toEqual({ code: 4403, reason: "link revoked" });
    expectProblem(
      await call("GET", `/v1/chatapp/sessions/${session.id}/live?token=${token}`),
      410,
      "link_expired",
    );
    await runDurableObjectAlarm(sessionStub(session.id));
    expect((await byKey.next()).type).toBe("session.qr_updated");
    expect(byKey.closed).toBeNull();
  });
});
