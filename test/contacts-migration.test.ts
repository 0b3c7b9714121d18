import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountD1 } from "./databases";
import { call, createAccount } from "./helpers";
import { connectedSession, seedMessages } from "./message-fixtures";

// Migration 0037 gives the messages stored before contacts were kept their contacts: one per
// (session, number) that wrote in, with its first and last message times. This file stores such
// messages as they were (no contact), runs the migration's back-fill statements again on them, and
// checks that they, the customer service window and opt-outs keep working.

/** The back-fill statements of migrations/accounts/0037_contacts.sql (those after its tables). */
function backfill(): string[] {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0037_"));
  if (!migration) throw new Error("migration 0037 is not among the test migrations");
  const statements = migration.queries.filter((q) => /^\s*(--[^\n]*\n\s*)*(INSERT|UPDATE)/.test(q));
  expect(statements).toHaveLength(3);
  return statements;
}

describe("migration 0037 (contacts for older messages)", () => {
  it("gives each (session, number) that wrote in one contact, linked from its messages and its opt-out", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedSession(key);
    const at = Date.UTC(2026, 10, 20, 9, 0, 0);
    const contact = "+14155552690";
    const ids = await seedMessages([
      {
        accountId,
        sessionId: session.id,
        toNumber: session.phone,
        fromNumber: contact,
        direction: "incoming",
        status: "delivered",
        createdAt: at,
      },
      {
        accountId,
        sessionId: session.id,
        toNumber: session.phone,
        fromNumber: contact,
        direction: "incoming",
        status: "delivered",
        createdAt: at + 60_000,
      },
      {
        accountId,
        sessionId: session.id,
        toNumber: contact,
        fromNumber: session.phone,
        direction: "outgoing",
        status: "read",
        createdAt: at + 120_000,
      },
    ]);
    const d1 = await accountD1(accountId);
    await d1
      .prepare(
        "INSERT INTO opt_outs (account_id, to_number, source, keyword, created_at) VALUES (?, ?, 'keyword', 'STOP', ?)",
      )
      .bind(accountId, contact, at + 60_000)
      .run();
    for (const statement of backfill()) await d1.prepare(statement).run();

    const contacts = await call<{
      data: { id: string; phone_number: string; first_message_at: string; last_message_at: string }[];
    }>("GET", `/v1/contacts?filter[session_id]=${session.id}`, { key });
    expect(contacts.body.data.map((c) => [c.phone_number, c.first_message_at, c.last_message_at])).toEqual([
      [
        contact,
        new Date(at).toISOString().replace("Z", "000Z"),
        new Date(at + 60_000).toISOString().replace("Z", "000Z"),
      ],
    ]);
    const id = contacts.body.data[0]?.id;
    const shown = await call<{ data: { contact: { id: string | null } } }>(
      "GET",
      `/v1/chatapp/messages/${ids[0]}`,
      { key },
    );
    expect(shown.body.data.contact.id).toBe(id);
    // The outgoing message was not back-filled; its address finds the contact on reads that ask.
    const detail = await call<{
      data: { opted_out: boolean; identifiers: { kind: string; value: string }[] };
    }>("GET", `/v1/contacts/${id}`, { key });
    expect(detail.body.data).toMatchObject({
      opted_out: true,
      identifiers: [{ kind: "phone_number", value: contact }],
    });
    // A new message from the number finds the back-filled contact.
    const next = await call<{ data: { contact: { id: string } } }>(
      "POST",
      `/sandbox/sessions/${session.id}/inbound`,
      {
        key,
        body: { from_number: contact, type: "text", content: "still here" },
      },
    );
    expect(next.body.data.contact.id).toBe(id);
  });
});
