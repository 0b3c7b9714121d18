import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { EVENTS } from "./event-fixtures";
import {
  type ApiResponse,
  call,
  clockMoves,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  showSession,
  TIMESTAMP,
} from "./helpers";
import { Watcher } from "./live";

// Session health (docs/sessions.md, Session health): the sandbox sets it, the Session shows it, a change
// records `session.health_changed` and sends a live frame.

const UNTIL = "2030-01-02T03:04:05.000000Z";
const CYCLE_END = "2030-02-01T00:00:00.000000Z";

async function connected(key: string) {
  const { session } = await createSession(key);
  const res = await call<SessionEnvelope>("POST", `/sandbox/sessions/${session.id}/scan`, { key, body: {} });
  expect(res.status).toBe(200);
  return res.body.session;
}

function setHealth(key: string, id: string, body: unknown): Promise<ApiResponse<SessionEnvelope>> {
  return call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/health`, { key, body });
}

const LIMITED = {
  timelock: { active: true, until: UNTIL },
  cap: { level: "CAPPED", used: 1000, total: 1000, cycle_end: CYCLE_END },
  quality: null,
};

/** Account `accountId`'s `session.health_changed` events of session `id`, oldest first. */
async function healthEvents(accountId: string, id: string) {
  return (
    await (
      await accountD1(accountId)
    )
      .prepare(
        `SELECT type, snapshot FROM ${EVENTS} WHERE account_id = ? AND type = 'session.health_changed' ORDER BY created_at`,
      )
      .bind(accountId)
      .all<{ type: string; snapshot: string }>()
  ).results.filter((row) => (JSON.parse(row.snapshot) as { id?: string }).id === id);
}

describe("session health", () => {
  it("is all nulls on a new session, in its GET and the list", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const empty = { timelock: null, cap: null, quality: null, checked_at: null };
    expect(session.health).toEqual(empty);
    expect((await showSession(key, session.id)).health).toEqual(empty);
    const list = await call<{ sessions: Array<{ id: string; health: unknown }> }>(
      "GET",
      "/v1/chatapp/sessions",
      {
        key,
      },
    );
    expect(list.body.sessions.find((s) => s.id === session.id)?.health).toEqual(empty);
  });

  it("the sandbox sets it: GET and list show it, one event, one live frame", async () => {
    const { key } = await createAccount();
    const session = await connected(key);
    const watcher = await Watcher.open(session.id, { key });
    expect((await watcher.next()).type).toBe("session.snapshot");

    const res = await setHealth(key, session.id, LIMITED);
    expect(res.status).toBe(200);
    expect(res.body.session.health).toMatchObject({
      ...LIMITED,
      checked_at: expect.stringMatching(TIMESTAMP),
    });

    const shown = await showSession(key, session.id);
    expect(shown.health).toEqual(res.body.session.health);
    const list = await call<{ sessions: Array<{ id: string; health: unknown }> }>(
      "GET",
      "/v1/chatapp/sessions",
      {
        key,
      },
    );
    expect(list.body.sessions.find((s) => s.id === session.id)?.health).toEqual(shown.health);

    const frame = await watcher.next();
    expect(frame.type).toBe("session.health_changed");
    expect(frame.session?.health).toEqual(shown.health);
    expect(frame).not.toHaveProperty("qr_code");

    const events = await call<{ data: Array<{ type: string; data: { id: string; health: unknown } }> }>(
      "GET",
      "/v1/events?filter[type]=session.health_changed",
      { key },
    );
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0]?.data).toMatchObject({ id: session.id, health: shown.health });
    watcher.socket.close(1000, "done");
  });

  it("the same health again changes only checked_at: no event, no frame", async () => {
    const { key, accountId } = await createAccount();
    const session = await connected(key);
    await setHealth(key, session.id, LIMITED);
    const first = await showSession(key, session.id);
    const watcher = await Watcher.open(session.id, { key });
    await watcher.next();
    await clockMoves();
    const again = await setHealth(key, session.id, LIMITED);
    expect(again.status).toBe(200);
    const after = await showSession(key, session.id);
    expect(after.health).toMatchObject(LIMITED);
    expect(after.updated_at).toBe(first.updated_at);
    expect(Date.parse(after.health.checked_at as string)).toBeGreaterThan(
      Date.parse(first.health.checked_at as string),
    );
    expect(await healthEvents(accountId, session.id)).toHaveLength(1);
    expect(watcher.unread).toEqual([]);
    // Clearing is a change.
    const cleared = await setHealth(key, session.id, { timelock: null, cap: null, quality: "green" });
    expect(cleared.body.session.health).toMatchObject({ timelock: null, cap: null, quality: "green" });
    expect((await watcher.next()).type).toBe("session.health_changed");
    expect(await healthEvents(accountId, session.id)).toHaveLength(2);
    watcher.socket.close(1000, "done");
  });

  it("a body that is not a health is 422 validation_failed and changes nothing", async () => {
    const { key } = await createAccount();
    const session = await connected(key);
    expectProblem(
      await setHealth(key, session.id, { ...LIMITED, quality: "purple" }),
      422,
      "validation_failed",
    );
    expectProblem(await setHealth(key, session.id, { ...LIMITED, extra: 1 }), 422, "validation_failed");
    expectProblem(await setHealth(key, session.id, { timelock: null }), 422, "validation_failed");
    expect((await showSession(key, session.id)).health.checked_at).toBeNull();
  });

  it("another account's session is 404", async () => {
    const { key } = await createAccount();
    const session = await connected(key);
    const other = await createAccount();
    expectProblem(await setHealth(other.key, session.id, LIMITED), 404, "not_found");
    expect((await showSession(key, session.id)).health.checked_at).toBeNull();
  });
});
