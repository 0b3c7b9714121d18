import { describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount } from "../helpers";
import { cloudApiSession, useFakeGraph } from "./webhooks-fixtures";

// Number checks on a Cloud API session (src/gateways/cloud-api/index.ts `checkNumbers`): Meta's
// Cloud API has no way to ask whether a number is on WhatsApp, so every number is null, nothing
// is asked of the Graph API and nothing is cached.

const fake = useFakeGraph();

describe("number checks on a Cloud API session", () => {
  it("answers null for every number, calls no Graph API and caches nothing", async () => {
    const graph = fake();
    const { key, accountId } = await createAccount(1);
    const { id } = await cloudApiSession(graph, key);
    const callsBefore = graph.calls.length;

    const res = await call<{ data: { number: string; on_chatapp: boolean | null }[] }>(
      "POST",
      `/v1/chatapp/sessions/${id}/contacts/check`,
      { key, body: { numbers: ["+14155550123", "+14155550000"] } },
    );

    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((c) => [c.number, c.on_chatapp])).toEqual([
      ["+14155550123", null],
      ["+14155550000", null],
    ]);
    expect(graph.calls.length).toBe(callsBefore);
    const stored = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM contact_checks WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(stored?.n).toBe(0);
  });
});
