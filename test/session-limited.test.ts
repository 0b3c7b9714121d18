import { describe, expect, it } from "vitest";
import { call, createAccount, expectProblem } from "./helpers";
import { balanceOf, connectedSession, ledgerOf, sendText, storedMessageCount } from "./message-fixtures";

// A session the network limits (docs/sessions.md, Session health) refuses single sends to cold contacts
// (who never wrote to it) with 409 `session_limited`, charging nothing; warm contacts are sent to.

const WARM = "+14155550101";
const COLD = "+14155550102";
const UNTIL = "2030-01-02T03:04:05.000000Z";

async function limit(key: string, id: string, body: Record<string, unknown>) {
  const res = await call("POST", `/sandbox/sessions/${id}/health`, {
    key,
    body: { timelock: null, cap: null, quality: null, ...body },
  });
  expect(res.status).toBe(200);
}

async function warmUp(key: string, id: string, from: string) {
  const res = await call("POST", `/sandbox/sessions/${id}/inbound`, {
    key,
    body: { from_number: from, type: "text", content: "hi" },
  });
  expect(res.status).toBe(201);
}

describe("session_limited", () => {
  it("an active timelock refuses a cold contact with 409, naming the limit and its end; nothing charged", async () => {
    const { key, accountId } = await createAccount();
    const session = await connectedSession(key);
    await warmUp(key, session.id, WARM);
    await limit(key, session.id, { timelock: { active: true, until: UNTIL } });
    const before = await balanceOf(accountId);
    const stored = await storedMessageCount(accountId);

    const problem = expectProblem(await sendText(key, session.id, [WARM, COLD]), 409, "session_limited");
    expect(problem).toMatchObject({ limit: "timelock", until: UNTIL, cold: [COLD] });
    expect(String(problem.detail)).toContain(UNTIL);
    expect(await balanceOf(accountId)).toBe(before);
    expect(await storedMessageCount(accountId)).toBe(stored);
    expect((await ledgerOf(accountId)).map((e) => e.kind)).toEqual(["credit"]);

    // A warm contact alone is sent to and charged.
    const warm = await sendText(key, session.id, [WARM]);
    expect(warm.status, warm.text).toBe(201);
    expect(await balanceOf(accountId)).toBeLessThan(before);
  });

  it("a cap at CAPPED refuses a cold contact, with the cycle's end; a timelock whose end passed does not", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    await limit(key, session.id, {
      cap: { level: "CAPPED", used: 250, total: 250, cycle_end: UNTIL },
      timelock: { active: true, until: "2020-01-01T00:00:00.000000Z" },
    });
    const problem = expectProblem(await sendText(key, session.id, [COLD]), 409, "session_limited");
    expect(problem).toMatchObject({ limit: "cap", until: UNTIL, cold: [COLD] });
  });

  it("an active timelock without a known end is refused with until null", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    await limit(key, session.id, { timelock: { active: true, until: null } });
    const problem = expectProblem(await sendText(key, session.id, [COLD]), 409, "session_limited");
    expect(problem).toMatchObject({ limit: "timelock", until: null });
    expect(String(problem.detail)).toContain("not known");
  });

  it("warnings below CAPPED, an inactive timelock and quality refuse nothing", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    await limit(key, session.id, {
      timelock: { active: false, until: null },
      cap: { level: "SECOND_WARNING", used: 900, total: 1000, cycle_end: UNTIL },
      quality: "red",
    });
    const res = await sendText(key, session.id, [COLD]);
    expect(res.status, res.text).toBe(201);
  });
});
