import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, createAccount, createSession, expectProblem, sessionStub } from "./helpers";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  ms,
  sendText,
  sessionStorage,
  waitForMessages,
} from "./message-fixtures";

// The sandbox phone can be offline (POST /sandbox/sessions/{id}/phone): messages end `sent` and get
// no ack until it is back online, when they are acked as if the phone received them then.

type PhoneEnvelope = { success: boolean; data: { online: boolean } };

function setPhone(key: string, session: string, body: unknown) {
  return call<PhoneEnvelope>("POST", `/sandbox/sessions/${session}/phone`, { key, body });
}

function showPhone(key: string, session: string) {
  return call<PhoneEnvelope>("GET", `/sandbox/sessions/${session}/phone`, { key });
}

const ackDeadlines = async (session: string) =>
  (await sessionStorage(session)).deadlines.filter((d) => d.kind.startsWith("ack_"));

describe("sandbox phone offline", () => {
  it("keeps a message sent while offline at `sent` past its ack times, then acks it once back online", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    expect((await showPhone(key, session)).body).toEqual({ success: true, data: { online: true } });
    const offline = await setPhone(key, session, { online: false });
    expect(offline.status).toBe(200);
    expect(offline.body).toEqual({ success: true, data: { online: false } });

    const res = await sendText(key, session, ["+14155552671"]);
    const id = res.body.data.messages[0]!.id;
    const [sent] = await waitForMessages(key, [id]);
    expect(sent!.status).toBe("sent");
    // The alarm takes both acks (a driven alarm runs at the time it was armed for): they are held.
    await driveAlarmUntil(session, async () => (await ackDeadlines(session)).length === 0);
    const held = await runInDurableObject(sessionStub(session), (_instance, state) =>
      state.storage.sql
        .exec<{ message_id: string }>("SELECT message_id FROM sandbox_held_acks")
        .toArray()
        .map((row) => row.message_id),
    );
    expect(held).toEqual([id]);
    expect(await getMessage(key, id)).toMatchObject({ status: "sent", delivered_at: null, read_at: null });

    const onlineAt = Date.now();
    const online = await setPhone(key, session, { online: true });
    expect(online.body).toEqual({ success: true, data: { online: true } });
    // Acked as a message the phone received now: delivered after 1 s, read after 3 s, on the 1 s grid.
    const deadlines = await ackDeadlines(session);
    expect(deadlines.map((d) => [d.kind, d.ref])).toEqual([
      ["ack_delivered", id],
      ["ack_read", id],
    ]);
    const [delivered, read] = deadlines.map((d) => d.due_at);
    expect(delivered! - onlineAt).toBeGreaterThanOrEqual(1_000);
    expect(delivered! - onlineAt).toBeLessThanOrEqual(2_000 + (Date.now() - onlineAt));
    expect(read! - delivered!).toBe(2_000);

    await driveAlarmUntil(session, async () => (await getMessage(key, id)).status === "read");
    const after = await getMessage(key, id);
    expect(ms(after.delivered_at)).toBeGreaterThanOrEqual(onlineAt);
    expect(ms(after.read_at)).toBeGreaterThanOrEqual(ms(after.delivered_at));
    expect(after.metadata.events?.map((e) => e.type)).toEqual(["delivered", "read"]);
    expect(await ackDeadlines(session)).toEqual([]);
  });

  it("keeps its state in the session object's storage: read back, and set again harmlessly", async () => {
    const { key } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await setPhone(key, session, { online: false });
    expect(await setPhone(key, session, { online: false })).toMatchObject({
      status: 200,
      body: { data: { online: false } },
    });
    expect((await showPhone(key, session)).body).toEqual({ success: true, data: { online: false } });
    // In the object's SQLite storage, which a restart keeps.
    const stored = await runInDurableObject(sessionStub(session), (_instance, state) =>
      state.storage.sql
        .exec<{ value: string }>("SELECT value FROM sandbox_link WHERE key = 'phone_offline'")
        .toArray(),
    );
    expect(stored).toEqual([{ value: "1" }]);
    await setPhone(key, session, { online: true });
    expect((await showPhone(key, session)).body.data).toEqual({ online: true });
  });

  it("is 404 for another account's session, and leaves its phone as it was", async () => {
    const { key } = await createAccount();
    const theirs = await createAccount();
    const { session } = await createSession(theirs.key);
    expectProblem(await setPhone(key, session.id, { online: false }), 404, "not_found");
    expectProblem(await showPhone(key, session.id), 404, "not_found");
    expect((await showPhone(theirs.key, session.id)).body.data).toEqual({ online: true });
  });

  it("is 422 for a body that is not `{online: boolean}`", async () => {
    const { key } = await createAccount();
    const session = (await connectedSession(key)).id;
    for (const body of [{}, { online: "false" }, { online: null }, { online: false, extra: 1 }]) {
      expectProblem(await setPhone(key, session, body), 422, "validation_failed");
    }
    expect((await showPhone(key, session)).body.data).toEqual({ online: true });
  });
});
