import { describe, expect, it } from "vitest";
import { call, createAccount, createSession, expectProblem, type SessionEnvelope } from "./helpers";

const PHONE = "+14155552671";
const CODE = /^[A-HJ-NP-TV-Z2-9]{4}-[A-HJ-NP-TV-Z2-9]{4}$/;

const pairingCode = (key: string, id: string, body: unknown) =>
  call<{ success: boolean; pairing_code: string }>("POST", `/v1/chatapp/sessions/${id}/pairing-code`, {
    key,
    body,
  });
const scan = (key: string, id: string, body: unknown) =>
  call<SessionEnvelope>("POST", `/sandbox/sessions/${id}/scan`, { key, body });

describe("POST /v1/chatapp/sessions/{id}/pairing-code", () => {
  it("issues a code that links the phone it was issued for (sandbox)", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await pairingCode(key, session.id, { phone_number: "+1 (415) 555-2671" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, pairing_code: expect.stringMatching(CODE) });

    const linked = await scan(key, session.id, { pairing_code: res.body.pairing_code.toLowerCase() });
    expect(linked.status).toBe(200);
    expect(linked.body.session).toMatchObject({ status: "connected", phone_number: PHONE, reason: null });
  });

  it("refuses a code other than the last one issued, and links nothing", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const first = await pairingCode(key, session.id, { phone_number: PHONE });
    const second = await pairingCode(key, session.id, { phone_number: "+447911123456" });
    expect(second.status).toBe(200);
    expect(second.body.pairing_code).not.toBe(first.body.pairing_code);

    const refused = await scan(key, session.id, { pairing_code: first.body.pairing_code });
    expectProblem(refused, 422, "pairing_code_invalid");
    const shown = await call<SessionEnvelope>("GET", `/v1/chatapp/sessions/${session.id}`, { key });
    expect(shown.body.session.status).toBe("pending");

    const linked = await scan(key, session.id, { pairing_code: second.body.pairing_code });
    expect(linked.body.session.phone_number).toBe("+447911123456");
  });

  it("is only for pending sessions", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    await scan(key, session.id, {});
    expectProblem(await pairingCode(key, session.id, { phone_number: PHONE }), 409, "session_not_pending");
  });

  it("validates the phone number", async () => {
    const { key } = await createAccount();
    const { session } = await createSession(key);
    const res = await pairingCode(key, session.id, { phone_number: "12" });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toHaveProperty("phone_number");
    expectProblem(await pairingCode(key, session.id, {}), 422, "validation_failed");
  });

  it("answers 404 for another account's session", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const { session } = await createSession(owner.key);
    expectProblem(await pairingCode(other.key, session.id, { phone_number: PHONE }), 404, "not_found");
  });
});
