import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import {
  call,
  createAccount,
  createSession,
  expectProblem,
  type SessionEnvelope,
  type SessionRecord,
  sessionStub,
  showSession,
  storedQrPayload,
  TIMESTAMP,
} from "./helpers";

/** wrangler.toml defaults. */
const QR_ROTATE_SECONDS = 20;
const QR_TIMEOUT_SECONDS = 180;
const PAIR_URL = /^http:\/\/localhost\/sandbox\/pair\/([0-9a-f-]{36}\.[A-Za-z0-9_-]{22})$/;

const v1 = (key: string, method: string, id: string, suffix = "") =>
  call<SessionEnvelope>(method, `/v1/chatapp/sessions/${id}${suffix}`, { key });
const sandbox = (key: string, id: string, action: "scan" | "drop" | "ban", body?: unknown) =>
  call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/${action}`, { key, body });

async function qrPayload(id: string): Promise<string> {
  const payload = await storedQrPayload(id);
  expect(payload).toMatch(PAIR_URL);
  return payload as string;
}

async function deadlines(id: string): Promise<{ kind: string; due_at: number }[]> {
  return runInDurableObject(sessionStub(id), async (_instance, state) =>
    state.storage.sql
      .exec<{ kind: string; due_at: number }>("SELECT kind, due_at FROM deadlines ORDER BY kind")
      .toArray(),
  );
}

async function connected(key: string, body: unknown = {}): Promise<SessionRecord> {
  const { session } = await createSession(key);
  const res = await sandbox(key, session.id, "scan", body);
  expect(res.status).toBe(200);
  return res.body.session;
}

describe("scan: pending → connected", () => {
  it("links with the phone number and display name given, normalised to E.164", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await sandbox(key, session.id, "scan", {
      phone_number: "+44 7911 123456",
      display_name: "  Support desk ",
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.session).toMatchObject({
      id: session.id,
      status: "connected",
      reason: null,
      phone_number: "+447911123456",
      display_name: "Support desk",
    });
    expect(res.body.session.last_seen_at).toMatch(TIMESTAMP);
    expect((res.body.session.last_seen_at as string) >= session.created_at).toBe(true);
    // Written through to D1: the show endpoint reads it.
    expect(await showSession(key, session.id)).toEqual(res.body.session);
    // Linking clears the QR and its deadlines.
    expect(await storedQrPayload(session.id)).toBeNull();
    expect(await deadlines(session.id)).toEqual([]);
  });

  it("links without a body: a stable E.164 sandbox number and a display name", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call<SessionEnvelope>("POST", `/sandbox/sessions/${session.id}/scan`, { key });
    expect(res.status).toBe(200);
    const phone = res.body.session.phone_number as string;
    expect(phone).toMatch(/^\+[1-9]\d{7,14}$/);
    expect(res.body.session.display_name).not.toBe(session.session_id);
    expect(res.body.session.display_name).toContain(phone);
  });

  it("accepts `Content-Type: application/json` with an empty body as no body", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await sandbox(key, session.id, "scan", "");
    expect(res.status).toBe(200);
    expect(res.body.session.status).toBe("connected");
  });

  it("refuses an invalid phone number, a wrong type and unknown fields with 422, and stays pending", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    for (const [body, field] of [
      [{ phone_number: "12" }, "phone_number"],
      [{ phone_number: "not a phone" }, "phone_number"],
      [{ phone_number: 447911123456 }, "phone_number"],
      [{ display_name: "" }, "display_name"],
      [{ status: "connected" }, "status"],
    ] as const) {
      const problem = expectProblem(await sandbox(key, session.id, "scan", body), 422, "validation_failed");
      expect(problem.errors).toMatchObject({ [field]: [expect.any(String)] });
    }
    expect((await showSession(key, session.id)).status).toBe("pending");
  });

  it("is 409 session_not_pending when already connected", async () => {
    const { key } = await createAccount();
    const session = await connected(key);
    expectProblem(await sandbox(key, session.id, "scan"), 409, "session_not_pending");
  });

  it("is 404 for an unknown or malformed session id", async () => {
    const { key } = await createAccount();
    expectProblem(await sandbox(key, crypto.randomUUID(), "scan"), 404, "not_found");
    expectProblem(await sandbox(key, "nope", "scan"), 404, "not_found");
  });
});

describe("drop, ban, disconnect and reconnect", () => {
  it("drop: connected → disconnected with the reason; reconnect restores the kept link", async () => {
    const { key } = await createAccount();
    const linked = await connected(key, { phone_number: "+14155552671", display_name: "Ops" });
    const dropped = await sandbox(key, linked.id, "drop", { reason: "network_error" });
    expect(dropped.status).toBe(200);
    expect(dropped.body.session).toMatchObject({
      status: "disconnected",
      reason: "network_error",
      phone_number: "+14155552671",
      display_name: "Ops",
    });
    expect(await showSession(key, linked.id)).toEqual(dropped.body.session);

    const res = await v1(key, "PATCH", linked.id, "/reconnect");
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("qr_code");
    expect(res.body.session).toMatchObject({
      status: "connected",
      reason: null,
      phone_number: "+14155552671",
      display_name: "Ops",
    });
    expect(res.body.session.last_seen_at).toMatch(TIMESTAMP);
    expect(await showSession(key, linked.id)).toEqual(res.body.session);
  });

  it("drop without a body uses the reason `connection_lost`", async () => {
    const { key } = await createAccount();
    const linked = await connected(key);
    const res = await call<SessionEnvelope>("POST", `/sandbox/sessions/${linked.id}/drop`, { key });
    expect(res.body.session).toMatchObject({ status: "disconnected", reason: "connection_lost" });
  });

  it("drop with logged_out: reconnect goes back to pending with a fresh QR and no link", async () => {
    const { key } = await createAccount();
    const linked = await connected(key, { phone_number: "+14155552671" });
    const dropped = await sandbox(key, linked.id, "drop", { reason: "logged_out", logged_out: true });
    expect(dropped.body.session).toMatchObject({ status: "disconnected", reason: "logged_out" });

    const res = await v1(key, "PATCH", linked.id, "/reconnect");
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ status: "pending", reason: null });
    expect(res.body.qr_code).toMatch(/^data:image\/png;base64,/);
    expect(await showSession(key, linked.id)).toEqual(res.body.session);
    const qr = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${linked.id}/qr-code`, { key });
    expect(qr.body.qr_code).toBe(res.body.qr_code);
    expect((await deadlines(linked.id)).map((d) => d.kind)).toEqual(["qr_rotate", "qr_timeout"]);

    // It can be linked again, to another phone.
    const relinked = await sandbox(key, linked.id, "scan", { phone_number: "+447911123456" });
    expect(relinked.body.session).toMatchObject({ status: "connected", phone_number: "+447911123456" });
  });

  it("drop is 409 session_not_connected unless connected; bad fields are 422", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    expectProblem(await sandbox(key, session.id, "drop"), 409, "session_not_connected");
    const linked = await connected(key);
    const bad = await sandbox(key, linked.id, "drop", { logged_out: "yes", reason: "" });
    expect(expectProblem(bad, 422, "validation_failed").errors).toMatchObject({
      logged_out: [expect.any(String)],
      reason: [expect.any(String)],
    });
    expect((await showSession(key, linked.id)).status).toBe("connected");
  });

  it("ban: connected → banned, terminal except for delete", async () => {
    const { key } = await createAccount();
    const linked = await connected(key);
    const res = await sandbox(key, linked.id, "ban", { reason: "spam_reports" });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ status: "banned", reason: "spam_reports" });
    expect(await showSession(key, linked.id)).toEqual(res.body.session);
    expectProblem(await v1(key, "PATCH", linked.id, "/reconnect"), 409, "session_not_disconnected");
    expectProblem(await v1(key, "PATCH", linked.id, "/disconnect"), 409, "session_not_connected");
    expectProblem(await v1(key, "GET", linked.id, "/qr-code"), 409, "session_not_pending");
    expectProblem(await sandbox(key, linked.id, "scan"), 409, "session_not_pending");
    expect((await v1(key, "DELETE", linked.id)).status).toBe(200);
  });

  it("ban without a body uses the reason `banned`, and works from disconnected", async () => {
    const { key } = await createAccount();
    const linked = await connected(key);
    await sandbox(key, linked.id, "drop");
    const res = await call<SessionEnvelope>("POST", `/sandbox/sessions/${linked.id}/ban`, { key });
    expect(res.body.session).toMatchObject({ status: "banned", reason: "banned" });
  });

  it("ban is 409 session_not_linked for a pending session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    expectProblem(await sandbox(key, session.id, "ban"), 409, "session_not_linked");
    expect((await showSession(key, session.id)).status).toBe("pending");
  });

  it("disconnect → reconnect → connected, then disconnect again", async () => {
    const { key } = await createAccount();
    const linked = await connected(key, { phone_number: "+14155552671" });
    const off = await v1(key, "PATCH", linked.id, "/disconnect");
    expect(off.body.session).toMatchObject({ status: "disconnected", reason: "disconnected_by_user" });
    const on = await v1(key, "PATCH", linked.id, "/reconnect");
    expect(on.body.session).toMatchObject({
      status: "connected",
      reason: null,
      phone_number: "+14155552671",
    });
    expect(on.body).not.toHaveProperty("qr_code");
    const again = await v1(key, "PATCH", linked.id, "/disconnect");
    expect(again.body.session.status).toBe("disconnected");
  });
});

describe("QR rotation and timeout (alarm)", () => {
  it("arms the rotation and timeout deadlines at creation", async () => {
    const { key } = await createAccount();
    const before = Date.now();
    const { session } = await createSession(key);
    const due = await deadlines(session.id);
    expect(due.map((d) => d.kind)).toEqual(["qr_rotate", "qr_timeout"]);
    const rotate = due[0]!;
    const timeout = due[1]!;
    expect(timeout.due_at - rotate.due_at).toBe((QR_TIMEOUT_SECONDS - QR_ROTATE_SECONDS) * 1000);
    expect(rotate.due_at).toBeGreaterThanOrEqual(before + QR_ROTATE_SECONDS * 1000);
    const alarm = await runInDurableObject(sessionStub(session.id), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBe(rotate.due_at);
  });

  it("rotates the QR on each alarm, keeping the session pending", async () => {
    const { key } = await createAccount();
    const { session, qr_code } = await createSession(key);
    const first = await qrPayload(session.id);

    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    const second = await qrPayload(session.id);
    expect(second).not.toBe(first);
    const served = await call<{ qr_code: string }>("GET", `/v1/chatapp/sessions/${session.id}/qr-code`, {
      key,
    });
    expect(served.body.qr_code).not.toBe(qr_code);
    expect((await showSession(key, session.id)).status).toBe("pending");

    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
    expect(await qrPayload(session.id)).not.toBe(second);
  });

  it("fails the session with `qr_timeout` after QR_TIMEOUT_SECONDS without a scan", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const runs = QR_TIMEOUT_SECONDS / QR_ROTATE_SECONDS;
    for (let i = 1; i < runs; i++) {
      expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);
      expect((await showSession(key, session.id)).status, `after ${i} rotations`).toBe("pending");
    }
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(true);

    const failed = await showSession(key, session.id);
    expect(failed).toMatchObject({ status: "failed", reason: "qr_timeout", phone_number: null });
    expectProblem(await v1(key, "GET", session.id, "/qr-code"), 409, "session_not_pending");
    expectProblem(await sandbox(key, session.id, "scan"), 409, "session_not_pending");
    // Nothing is left to run.
    expect(await deadlines(session.id)).toEqual([]);
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(false);

    // failed → reconnect → pending with a new QR and fresh deadlines.
    const res = await v1(key, "PATCH", session.id, "/reconnect");
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ status: "pending", reason: null });
    expect(res.body.qr_code).toMatch(/^data:image\/png;base64,/);
    expect(await showSession(key, session.id)).toMatchObject({ status: "pending", reason: null });
    expect((await deadlines(session.id)).map((d) => d.kind)).toEqual(["qr_rotate", "qr_timeout"]);
    const scanned = await sandbox(key, session.id, "scan");
    expect(scanned.body.session.status).toBe("connected");
  });

  it("does nothing when an alarm fires after the session was linked", async () => {
    const { key } = await createAccount();
    const linked = await connected(key);
    expect(await runDurableObjectAlarm(sessionStub(linked.id))).toBe(false);
    expect(await showSession(key, linked.id)).toEqual(linked);
  });

  it("deleting a pending session removes its alarm and storage", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    expect((await v1(key, "DELETE", session.id)).status).toBe(200);
    expect(await runDurableObjectAlarm(sessionStub(session.id))).toBe(false);
    const tables = await runInDurableObject(sessionStub(session.id), async (_i, state) =>
      state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
        )
        .toArray(),
    );
    expect(tables).toEqual([]);
    const row = await (await accountD1(accountId))
      .prepare("SELECT id FROM sessions WHERE id = ?")
      .bind(session.id)
      .first();
    expect(row).toBeNull();
  });
});

describe("sandbox pairing page", () => {
  const pairPath = (payload: string) => new URL(payload).pathname;

  it("the QR payload is a pairing URL on the request's origin, holding the session id", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const payload = await qrPayload(session.id);
    const token = payload.match(PAIR_URL)?.[1] as string;
    expect(token.startsWith(`${session.id}.`)).toBe(true);
  });

  it("GET shows an HTML page, without auth, and changes nothing", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call("GET", pairPath(await qrPayload(session.id)), {
      headers: { Accept: "text/html" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.text).toContain("<form");
    expect(res.text).toContain("Test account");
    expect(res.text).not.toContain(session.session_id);
    expect(res.text).toContain('href="/link.css"');
    expect((await showSession(key, session.id)).status).toBe("pending");
  });

  it("POST links the session as a phone would", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call("POST", pairPath(await qrPayload(session.id)));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const linked = await showSession(key, session.id);
    expect(linked).toMatchObject({ status: "connected", phone_number: expect.stringMatching(/^\+\d+$/) });
    expect(res.text).toContain(linked.phone_number as string);
  });

  it("POST of a form submission (urlencoded, empty) links the session too", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call("POST", pairPath(await qrPayload(session.id)), {
      body: "",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    expect((await showSession(key, session.id)).status).toBe("connected");
  });

  it("an old, rotated token is 404 HTML for GET and POST, and does not link", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const old = await qrPayload(session.id);
    await runDurableObjectAlarm(sessionStub(session.id));
    expect(await qrPayload(session.id)).not.toBe(old);

    const page = await call("GET", pairPath(old));
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const post = await call("POST", pairPath(old));
    expect(post.status).toBe(404);
    expect(post.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await showSession(key, session.id)).status).toBe("pending");

    // The current token still works.
    expect((await call("POST", pairPath(await qrPayload(session.id)))).status).toBe(200);
  });

  it("a used token is refused once the session is linked", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const path = pairPath(await qrPayload(session.id));
    expect((await call("POST", path)).status).toBe(200);
    expect((await call("GET", path)).status).toBe(404);
    const again = await call("POST", path);
    expect([404, 409]).toContain(again.status);
    expect(again.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("malformed and unknown tokens are 404 HTML", async () => {
    for (const token of [
      "nope",
      `${crypto.randomUUID()}.${"A".repeat(22)}`,
      "x".repeat(300),
      "%3Cscript%3E",
    ]) {
      for (const method of ["GET", "POST"]) {
        const res = await call(method, `/sandbox/pair/${token}`);
        expect(res.status, `${method} ${token}`).toBe(404);
        expect(res.headers.get("content-type")).toMatch(/^(text\/html|application\/problem\+json)/);
      }
    }
  });

  it("every answer, the 404 and 409 pages too, sends the link page's CSP, no framing, nosniff and no-store", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const path = pairPath(await qrPayload(session.id));
    const page = await call("GET", path);
    const linked = await call("POST", path);
    const notPending = await call("POST", path);
    const unknown = await call("GET", `/sandbox/pair/${crypto.randomUUID()}.${"A".repeat(22)}`);
    expect([page.status, linked.status, notPending.status, unknown.status]).toEqual([200, 200, 409, 404]);
    for (const res of [page, linked, notPending, unknown]) {
      const csp = Object.fromEntries(
        (res.headers.get("content-security-policy") ?? "").split(/;\s*/).map((directive) => {
          const [name = "", ...values] = directive.split(" ");
          return [name, values.join(" ")];
        }),
      );
      expect(csp).toEqual({
        "default-src": "'none'",
        "script-src": "'self'",
        "style-src": "'self'",
        "img-src": "'self' data:",
        "connect-src": "'self' ws://localhost",
        "form-action": "'self'",
        "base-uri": "'none'",
        "frame-ancestors": "'none'",
      });
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });
});
