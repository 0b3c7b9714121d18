import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/lib/crypto";
import { accountD1, everyAccountD1 } from "./databases";
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
import { linkUrl, servedQr } from "./live";

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

interface LinkView {
  success: boolean;
  session: {
    id: string;
    status: string;
    reason: string | null;
    phone_number: string | null;
    updated_at: string;
  };
  qr_code: string | null;
  qr_expires_at: string | null;
  return_url: string | null;
  link_expires_at: string;
}

const view = (token: string) => call<LinkView>("GET", `/link/${token}/session`);
const linkUrlCall = (key: string, id: string, body?: unknown) =>
  call("POST", `/v1/chatapp/sessions/${id}/link-url`, { key, body });

/** The link_tokens rows of session `sessionId`, looked for in every account database. */
async function tokenRows(sessionId: string) {
  const rows: Record<string, unknown>[] = [];
  for (const d1 of everyAccountD1()) {
    const { results } = await d1
      .prepare("SELECT * FROM link_tokens WHERE session_id = ? ORDER BY created_at")
      .bind(sessionId)
      .all<Record<string, unknown>>();
    rows.push(...results);
  }
  return rows;
}

describe("POST /v1/chatapp/sessions/{id}/link-url", () => {
  it("makes a link URL on the request's origin, valid 900 s by default", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const res = await call<{ success: boolean; url: string; expires_at: string; created_at: string }>(
      "POST",
      `/v1/chatapp/sessions/${session.id}/link-url`,
      { key },
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      url: expect.stringMatching(/^http:\/\/localhost\/link\/[A-Za-z0-9_-]{43}$/),
      expires_at: expect.stringMatching(TIMESTAMP),
      return_url: null,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at)).toBe(900_000);
    const [row] = await tokenRows(session.id);
    expect(row).toMatchObject({
      account_id: accountId,
      session_id: session.id,
      revoked_at: null,
      return_url: null,
    });
  });

  it("stores only the token's SHA-256, never the token", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    expect(token).toMatch(TOKEN);
    const rows = await tokenRows(session.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).not.toBe(token);
    expect(rows[0]?.token_hash).toBe(await sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("each call makes a new, different token", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const [a, b] = [await linkUrl(key, session.id), await linkUrl(key, session.id)];
    expect(a.token).not.toBe(b.token);
    expect(await tokenRows(session.id)).toHaveLength(2);
  });

  it("takes expires_in from 60 to 86400 seconds and an https return_url", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    for (const seconds of [60, 86_400]) {
      const made = await linkUrl(key, session.id, { expires_in: seconds });
      expect(Date.parse(made.expires_at) - Date.parse(made.created_at)).toBe(seconds * 1000);
    }
    const made = await linkUrl(key, session.id, { return_url: "https://app.example.com/done?x=1" });
    expect(made.return_url).toBe("https://app.example.com/done?x=1");
    expect((await view(made.token)).body.return_url).toBe("https://app.example.com/done?x=1");
  });

  it("refuses expires_in out of 60–86400, return_url that is not public https, and unknown fields (422)", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    for (const value of [59, 86_401, 0, 1.5, "900", null]) {
      const problem = expectProblem(
        await linkUrlCall(key, session.id, { expires_in: value }),
        422,
        "validation_failed",
      );
      expect(Object.keys(problem.errors as object)).toEqual(["expires_in"]);
    }
    for (const value of [
      "http://app.example.com/done",
      "https://localhost/x",
      "https://10.0.0.1/",
      "not a url",
    ]) {
      const problem = expectProblem(
        await linkUrlCall(key, session.id, { return_url: value }),
        422,
        "validation_failed",
      );
      expect(Object.keys(problem.errors as object)).toEqual(["return_url"]);
    }
    const http = expectProblem(
      await linkUrlCall(key, session.id, { return_url: "http://app.example.com/done" }),
      422,
      "validation_failed",
    );
    expect(http.errors).toEqual({ return_url: ["must use https"] });
    const unknown = expectProblem(
      await linkUrlCall(key, session.id, { token: "mine" }),
      422,
      "validation_failed",
    );
    expect(unknown.errors).toEqual({ token: ["unknown field"] });
    expect(await tokenRows(session.id)).toEqual([]);
  });

  it("another account's session is 404 and gets no token; without a key it is 401", async () => {
    const { key } = await createAccount();
    const theirs = await createAccount();
    const { session } = await createSession(theirs.key);
    expectProblem(await linkUrlCall(key, session.id), 404, "not_found");
    expectProblem(
      await call("DELETE", `/v1/chatapp/sessions/${session.id}/link-url`, { key }),
      404,
      "not_found",
    );
    expectProblem(await linkUrlCall("", session.id), 401, "unauthenticated");
    expect(await tokenRows(session.id)).toEqual([]);
  });
});

describe("GET /link/{token}/session", () => {
  it("shows the pending session's public view: status, QR code and its expiry, return_url", async () => {
    const { accountId, key } = await createAccount();
    const { session } = await createSession(key);
    const made = await linkUrl(key, session.id, { return_url: "https://app.example.com/done" });
    const res = await view(made.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      session: {
        id: session.id,
        status: "pending",
        reason: null,
        phone_number: null,
        updated_at: (await showSession(key, session.id)).updated_at,
      },
      qr_code: await servedQr(key, session.id),
      qr_expires_at: expect.stringMatching(TIMESTAMP),
      return_url: "https://app.example.com/done",
      link_expires_at: made.expires_at,
    });
    // Nothing of the account: not its id, nor the gateway's name of the session.
    expect(res.text).not.toContain(accountId);
    expect(res.text).not.toContain(`session_${session.id}`);
  });

  it("shows the new QR after a rotation, and the linked phone once connected", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const before = (await view(token)).body;
    await runDurableObjectAlarm(sessionStub(session.id));
    const after = (await view(token)).body;
    expect(after.qr_code).not.toBe(before.qr_code);
    expect(Date.parse(after.qr_expires_at as string)).toBe(
      Date.parse(before.qr_expires_at as string) + 20_000,
    );

    await call("POST", `/sandbox/sessions/${session.id}/scan`, {
      key,
      body: { phone_number: "+14155552671" },
    });
    expect((await view(token)).body).toMatchObject({
      session: { status: "connected", phone_number: "+14155552671", reason: null },
      qr_code: null,
      qr_expires_at: null,
    });
  });

  it("an unknown or malformed token is 404 link_not_found", async () => {
    for (const token of ["A".repeat(43), "short", "x".repeat(300)]) {
      expectProblem(await view(token), 404, "link_not_found");
    }
  });

  it("an expired token is 410 link_expired", async () => {
    const { key, accountId } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id, { expires_in: 60 });
    expect((await view(token)).status).toBe(200);
    await (await accountD1(accountId))
      .prepare("UPDATE link_tokens SET expires_at = ? WHERE token_hash = ?")
      .bind(Date.now() - 1, await sha256Hex(token))
      .run();
    const problem = expectProblem(await view(token), 410, "link_expired");
    expect(problem.detail).toMatch(/expired/);
    expectProblem(await call("POST", `/link/${token}/reconnect`), 410, "link_expired");
  });

  it("DELETE link-url revokes every token of the session (410), and only of that session", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const other = (await createSession(key)).session;
    const [a, b] = [await linkUrl(key, session.id), await linkUrl(key, session.id)];
    const kept = await linkUrl(key, other.id);
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}/link-url`, { key })).status).toBe(204);
    for (const token of [a.token, b.token]) {
      expect(expectProblem(await view(token), 410, "link_expired").detail).toMatch(/revoked/);
    }
    expect((await view(kept.token)).status).toBe(200);
    expect((await tokenRows(session.id)).every((row) => typeof row.revoked_at === "number")).toBe(true);
    // Revoking again (nothing live) is still 204; a new link works.
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}/link-url`, { key })).status).toBe(204);
    expect((await view((await linkUrl(key, session.id)).token)).status).toBe(200);
  });

  it("a deleted session's tokens are gone: 404 link_not_found", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    expect((await call("DELETE", `/v1/chatapp/sessions/${session.id}`, { key })).status).toBe(200);
    expectProblem(await view(token), 404, "link_not_found");
    expect(await tokenRows(session.id)).toEqual([]);
  });
});

describe("POST /link/{token}/pairing-code and /reconnect", () => {
  it("issues a pairing code for the token's session, as the /v1 route does", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    const res = await call<{ success: boolean; pairing_code: string }>(
      "POST",
      `/link/${token}/pairing-code`,
      {
        body: { phone_number: "+1 415 555 2672" },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      pairing_code: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/),
    });
    const linked = await call<SessionEnvelope>("POST", `/sandbox/sessions/${session.id}/scan`, {
      key,
      body: { pairing_code: res.body.pairing_code },
    });
    expect(linked.body.session).toMatchObject({ status: "connected", phone_number: "+14155552672" });
    expectProblem(
      await call("POST", `/link/${token}/pairing-code`, { body: { phone_number: "+14155552672" } }),
      409,
      "session_not_pending",
    );
    expectProblem(
      await call("POST", `/link/${token}/pairing-code`, { body: { phone_number: "12" } }),
      422,
      "validation_failed",
    );
  });

  it("reconnects a session whose link is gone: pending with a fresh QR code", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const { token } = await linkUrl(key, session.id);
    expectProblem(await call("POST", `/link/${token}/reconnect`), 409, "session_not_disconnected");
    await call("POST", `/sandbox/sessions/${session.id}/scan`, { key });
    await call("POST", `/sandbox/sessions/${session.id}/drop`, { key, body: { logged_out: true } });
    const res = await call<{ session: LinkView["session"]; qr_code: string }>(
      "POST",
      `/link/${token}/reconnect`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      session: {
        id: session.id,
        status: "pending",
        reason: null,
        phone_number: null,
        updated_at: expect.any(String),
      },
      qr_code: expect.stringMatching(/^data:image\/png;base64,/),
    });
    expect((await showSession(key, session.id)).status).toBe("pending");
    expect((await view(token)).body.qr_code).toBe(res.body.qr_code);
  });

  it("an unknown token acts on nothing: 404 link_not_found", async () => {
    expectProblem(
      await call("POST", `/link/${"B".repeat(43)}/pairing-code`, { body: { phone_number: "+14155552672" } }),
      404,
      "link_not_found",
    );
    expectProblem(await call("POST", `/link/${"B".repeat(43)}/reconnect`), 404, "link_not_found");
  });
});
