import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findMessage } from "../src/db/queries/messages";
import { dispatchRequestOf } from "../src/messages/dispatch-request";
import type { ChatSession } from "../src/sessions/chat-session";
import { refuse, restoreD1 } from "./d1-outage";
import { accountDb } from "./databases";
import { call, createAccount, createSession, expectProblem, sessionStub, waitFor } from "./helpers";
import {
  balanceOf,
  connectedSession,
  getMessage,
  ledgerOf,
  sendText,
  waitForMessages,
} from "./message-fixtures";

// Every write a session object owes D1 (sent and failed outcomes with their refunds, its session
// row) is kept in the object until D1 has it, and retried from the alarm. D1 is made to refuse a
// write for real (d1-outage.ts).

/** Runs the session's alarm as if its `sync` retry were due now. */
async function runSyncRetry(id: string): Promise<void> {
  await runInDurableObject(sessionStub(id), (_i: ChatSession, state) => {
    state.storage.sql.exec("UPDATE deadlines SET due_at = 0 WHERE kind = 'sync'");
  });
  await runDurableObjectAlarm(sessionStub(id));
}

async function deadlinesOf(id: string): Promise<{ kind: string; ref: string }[]> {
  return runInDurableObject(sessionStub(id), (_i: ChatSession, state) =>
    state.storage.sql
      .exec<{ kind: string; ref: string }>("SELECT kind, ref FROM deadlines ORDER BY kind, ref")
      .toArray(),
  );
}

describe("a refund D1 refuses", () => {
  it("is retried from the alarm until the message is failed and refunded once", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await refuse("ledger_entries", "INSERT", { accountId, when: "NEW.kind = 'refund'" });
    // …0000 is refused by the sandbox at once: the message fails and must be refunded.
    const res = await sendText(key, session, ["+14155550000"]);
    const id = res.body.data.messages[0]!.id;
    await waitFor(async () => (await deadlinesOf(session)).some((d) => d.kind === "sync"), {
      reason: "the send and its refused write (the outbound queue hands the message over)",
      timeoutMs: 2_500,
    });
    expect(await deadlinesOf(session)).toContainEqual({ kind: "sync", ref: "" });
    expect(await getMessage(key, id)).toMatchObject({ status: "queued" });
    expect(await balanceOf(accountId)).toBe(0.99);

    // Still refused: the retry fails and is scheduled again.
    await runSyncRetry(session);
    expect(await deadlinesOf(session)).toContainEqual({ kind: "sync", ref: "" });

    await restoreD1();
    await runSyncRetry(session);
    const [failed] = await waitForMessages(key, [id]);
    expect(failed).toMatchObject({ status: "failed", reason: "recipient_not_on_chatapp" });
    expect(await balanceOf(accountId)).toBe(1);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge", "refund"]);
    expect((await deadlinesOf(session)).filter((d) => d.kind === "sync")).toEqual([]);

    // A redelivery of the same queue message (or the sweep's) changes nothing now.
    const row = await findMessage(await accountDb(accountId), accountId, id);
    expect(await sessionStub(session).enqueue([dispatchRequestOf(row!, 1)])).toBe(0);
    await runSyncRetry(session);
    expect((await ledgerOf(accountId)).map((entry) => entry.kind)).toEqual(["credit", "charge", "refund"]);
  });
});

describe("a session row D1 refuses", () => {
  it("refuses a create D1 cannot record (it holds the account's slot): 503, and nothing is kept", async () => {
    const { key, accountId } = await createAccount(1);
    await refuse("sessions", "INSERT", { accountId });
    const res = await call("POST", "/v1/chatapp/sessions", { key });
    expectProblem(res, 503, "service_unavailable");
    const list = await call<{ sessions: unknown[] }>("GET", "/v1/chatapp/sessions", { key });
    expect(list.body.sessions).toEqual([]);

    await restoreD1();
    const { session } = await createSession(key);
    const shown = await call<{ session: { id: string; status: string } }>(
      "GET",
      `/v1/chatapp/sessions/${session.id}`,
      { key },
    );
    expect(shown.body.session).toMatchObject({ id: session.id, status: "pending" });
  });

  it("catches up with the latest state when a status change was refused", async () => {
    const { key, accountId } = await createAccount(1);
    const session = (await connectedSession(key)).id;
    await refuse("sessions", "UPDATE", { accountId });
    const res = await call<{ session: { status: string } }>(
      "PATCH",
      `/v1/chatapp/sessions/${session}/disconnect`,
      {
        key,
      },
    );
    expect(res.body.session.status).toBe("disconnected");
    const stale = await call<{ session: { status: string } }>("GET", `/v1/chatapp/sessions/${session}`, {
      key,
    });
    expect(stale.body.session.status).toBe("connected");
    await restoreD1();
    await runSyncRetry(session);
    const shown = await call<{ session: { status: string; reason: string } }>(
      "GET",
      `/v1/chatapp/sessions/${session}`,
      {
        key,
      },
    );
    expect(shown.body.session).toMatchObject({ status: "disconnected", reason: "disconnected_by_user" });
  });
});
