import { describe, expect, it } from "vitest";
import { archivableRecipients, recordRecipientArchive } from "../src/db/queries/recipient-archives";
import { archiveLines, archivesOf, runArchiveJob, setRetention } from "./archive-fixtures";
import { command, createCampaign, showCampaign, waitForCampaign } from "./campaign-fixtures";
import { accountD1, accountDb } from "./databases";
import { ERASED, erase } from "./erasure-fixtures";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession } from "./message-fixtures";

// Archives of campaign recipients (docs/retention.md, Archives): once a campaign is finished past the
// account's `message_retention_days` and its messages are archived, the hourly job moves its
// recipients to R2, one archive per campaign, and the recipient list names the archives.

const ANN = "+14155550141";
const BOB = "+14155550142";

interface Recipient {
  seq: number;
  to_number: string | null;
  variables: Record<string, string> | null;
  status: string;
  message_id: string | null;
}

/** An account keeping nothing (retention 0) whose two-recipient campaign has completed, every message sent. */
async function completedCampaign() {
  const { accountId, key } = await createAccount(100);
  const session = await connectedSession(key);
  const draft = await createCampaign(key, {
    chatapp_session_ids: [session.id],
    recipients: [
      { to_number: ANN, variables: { name: "Ann" } },
      { to_number: BOB, variables: { name: "Bob" } },
    ],
    delay_range: { min_ms: 10, max_ms: 20 },
  });
  expect((await command(key, draft.id, "start")).status).toBe(200);
  await waitForCampaign(key, draft.id, (c) => c.status === "completed" && c.stats.queued === 0);
  await setRetention(accountId, 0);
  return { accountId, key, campaignId: draft.id };
}

async function recipientsOf(key: string, campaignId: string) {
  return call<{ data: Recipient[]; archive_ids?: string[] }>(
    "GET",
    `/v1/chatapp/campaigns/${campaignId}/recipients`,
    { key },
  );
}

describe("campaign recipient archives", () => {
  it("take a finished campaign's recipients after its messages, in one run, and the list names the archive", async () => {
    const { key, campaignId, accountId } = await completedCampaign();
    const shown = await recipientsOf(key, campaignId);
    expect(shown.status).toBe(200);
    expect(shown.body.data).toHaveLength(2);
    for (const recipient of shown.body.data) {
      expect(["sent", "delivered", "read"]).toContain(recipient.status);
      expect(recipient.message_id).not.toBeNull();
    }
    const campaign = await showCampaign(key, campaignId);

    const run = await runArchiveJob();

    expect(run).toMatchObject({ messages: 2, campaign_recipients: 2 });
    const listed = await archivesOf(key);
    const archive = listed.find((a) => a.kind === "campaign_recipients");
    expect(archive).toMatchObject({ campaign_id: campaignId, count: 2 });
    expect(listed.filter((a) => a.kind === "messages").map((a) => a.campaign_id)).toEqual([null]);
    // Each line a recipient as the list showed it (the list is newest first, the archive by seq).
    expect(await archiveLines(key, archive?.id ?? "")).toEqual([...shown.body.data].reverse());

    const gone = await recipientsOf(key, campaignId);
    expectProblem(gone, 404, "campaign_recipients_archived");
    expect(gone.body.archive_ids).toEqual([archive?.id]);
    // The campaign itself stays, its counts as they were.
    expect(await showCampaign(key, campaignId)).toEqual(campaign);
    const left = await (await accountD1(accountId))
      .prepare("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = ?")
      .bind(campaignId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    expect(await runArchiveJob()).toMatchObject({ campaign_recipients: 0 });
  });

  it("keep a campaign's recipients while any of its messages is in D1, or while it runs", async () => {
    const { campaignId, accountId } = await completedCampaign();
    const db = await accountDb(accountId);
    const d1 = await accountD1(accountId);
    const now = Date.now();
    const rule = {
      before: now,
      now,
      otpSendWindowMs: 0,
      waiting: ["queued", "scheduled"] as const,
      finishedCampaign: ["completed", "cancelled"] as const,
      messageEventTypes: [],
    };
    // Its messages are still there: nothing to take.
    expect(await archivableRecipients(db, accountId, rule, null, 10)).toEqual([]);
    await d1.prepare("UPDATE messages SET campaign_id = NULL WHERE campaign_id = ?").bind(campaignId).run();
    expect((await archivableRecipients(db, accountId, rule, null, 10)).map((r) => r.toNumber)).toEqual([
      ANN,
      BOB,
    ]);
    // Running again (say the operator's fix): nothing to take.
    await d1.prepare("UPDATE campaigns SET status = 'running' WHERE id = ?").bind(campaignId).run();
    expect(await archivableRecipients(db, accountId, rule, null, 10)).toEqual([]);
    await d1.prepare("UPDATE campaigns SET status = 'completed' WHERE id = ?").bind(campaignId).run();

    // An erasure that hashes a recipient between the read and the delete keeps that row.
    const rows = await archivableRecipients(db, accountId, rule, null, 10);
    await d1
      .prepare("UPDATE campaign_recipients SET to_number = 'erased:x' WHERE campaign_id = ? AND seq = 1")
      .bind(campaignId)
      .run();
    const archive = {
      id: `arc_${"0".repeat(31)}7`,
      accountId,
      kind: "campaign_recipients" as const,
      campaignId,
      day: "2026-11-28",
      objectKey: "test/7",
      messageCount: 2,
      bytes: 0,
      createdAt: now,
    };
    expect(await recordRecipientArchive(db, archive, rows)).toEqual([`${campaignId}/2`]);
  });

  it("are rewritten by an erasure of a recipient's number", async () => {
    const { key, campaignId } = await completedCampaign();
    await runArchiveJob();
    const archive = (await archivesOf(key)).find((a) => a.campaign_id === campaignId);
    const before = await archiveLines(key, archive?.id ?? "");

    const erased = await erase(key, { phone_number: ANN });

    expect(erased.status).toBe("completed");
    expect(erased.counts).toMatchObject({ archived_campaign_recipients: 1, archived_messages: 1 });
    const after = await archiveLines(key, archive?.id ?? "");
    expect(JSON.stringify(after)).not.toContain(ANN.slice(1));
    expect(JSON.stringify(after)).not.toContain("Ann");
    expect(after).toEqual([
      { ...before[0], to_number: expect.stringMatching(ERASED), variables: null },
      before[1],
    ]);
  });
});
