import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { command, createCampaign, recipients } from "./campaign-fixtures";
import { accountD1 } from "./databases";
import { call, createAccount, waitFor } from "./helpers";
import { connectedSession, getMessage, seedMessages, sendText, storedMessageCount } from "./message-fixtures";

// The indexes of messages by account lead with the account's number, not its id
// (migrations/accounts/0055_messages_by_account_number.sql): every writer of a message row sets it, the
// migration gave every row stored before its account's, and a list reads only its account's.

/** The account's messages by direction, and how many of them hold a number other than the account's. */
async function numbersOf(accountId: string) {
  return (await accountD1(accountId))
    .prepare(
      `SELECT m.direction AS direction, count(*) AS messages, sum(m.account_number IS NOT a.number) AS wrong
      FROM messages m JOIN accounts a ON a.id = m.account_id WHERE m.account_id = ? GROUP BY m.direction ORDER BY m.direction`,
    )
    .bind(accountId)
    .all<{ direction: string; messages: number; wrong: number }>();
}

describe("messages by account number", () => {
  it("are stored with their account's number by a send, an incoming message and a campaign, and listed by it", async () => {
    await createAccount(1); // another account first, so that numbers and ids do not line up by chance
    const { key, accountId } = await createAccount(10);
    const session = (await connectedSession(key)).id;
    const sent = await sendText(key, session, ["+14155552671", "+14155552672"]);
    expect(sent.status).toBe(201);
    const incoming = await call<{ data: { id: string } }>("POST", `/sandbox/sessions/${session}/inbound`, {
      key,
      body: { from_number: "+14155552673", type: "text", content: "hi" },
    });
    expect(incoming.status).toBe(201);
    const draft = await createCampaign(key, { chatapp_session_ids: [session], recipients: recipients(2) });
    expect((await command(key, draft.id, "start")).status).toBe(200);
    await waitFor(async () => (await storedMessageCount(accountId)) >= 5, {
      reason: "the campaign's two messages are made",
    });
    await seedMessages([{ accountId, sessionId: session, toNumber: "+14155552675", createdAt: 1 }]);

    const stored = await numbersOf(accountId);
    expect(stored.results).toEqual([
      { direction: "incoming", messages: 1, wrong: 0 },
      { direction: "outgoing", messages: expect.any(Number), wrong: 0 },
    ]);
    // Two sent, two of the campaign's, one seeded.
    expect(stored.results[1]!.messages).toBe(5);

    // Another account's list, by every filter an index serves, shows none of them.
    const other = await createAccount(1);
    for (const filter of [
      "",
      "&filter[to_number]=%2B14155552671",
      "&filter[direction]=incoming",
      "&filter[status]=queued",
    ]) {
      const page = await call<{ data: unknown[] }>("GET", `/v1/chatapp/messages?limit=100${filter}`, {
        key: other.key,
      });
      expect(page.body.data, filter).toEqual([]);
    }
    const mine = await call<{ data: { id: string }[] }>(
      "GET",
      "/v1/chatapp/messages?limit=100&filter[to_number]=%2B14155552671",
      {
        key,
      },
    );
    expect(mine.body.data.map((m) => m.id)).toEqual([sent.body.data.messages[0]!.id]);
    expect((await getMessage(key, incoming.body.data.id)).id).toBe(incoming.body.data.id);
  });

  it("stored before the migration are given their account's number by it", async () => {
    const first = await createAccount(1);
    const second = await createAccount(1);
    const session = "33333333-3333-4333-8333-333333333333";
    await seedMessages([
      { accountId: first.accountId, sessionId: session, toNumber: "+14155552671", createdAt: 1 },
      { accountId: second.accountId, sessionId: session, toNumber: "+14155552672", createdAt: 2 },
    ]);
    // As a row stored before it: the column's default.
    for (const account of [first, second])
      await (await accountD1(account.accountId))
        .prepare("UPDATE messages SET account_number = 0 WHERE account_id = ?")
        .bind(account.accountId)
        .run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.includes("_messages_by_account_number"));
    const backfill = migration?.queries.filter((q) => /^\s*UPDATE `messages`/m.test(q)) ?? [];
    expect(backfill).toHaveLength(1);
    // The migration runs on each account database: here, the two accounts' (one, or two).
    for (const d1 of new Set([await accountD1(first.accountId), await accountD1(second.accountId)]))
      await d1.prepare(backfill[0]!).run();
    for (const account of [first, second])
      expect((await numbersOf(account.accountId)).results).toEqual([
        { direction: "outgoing", messages: 1, wrong: 0 },
      ]);
  });
});
