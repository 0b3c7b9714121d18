import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { everyAccountD1 } from "./databases";
import { call, sessionStub, waitFor } from "./helpers";

// Shared set-up of the campaign run tests: campaigns through the API, and reads of what D1 and
// the session objects hold, to compare the statistics with a recount.

export interface Campaign {
  id: string;
  status: string;
  stats: Record<
    "total" | "queued" | "sent" | "delivered" | "read" | "failed" | "replied" | "skipped",
    number
  >;
  cost: number;
  refunded: number;
  started_at: string | null;
  completed_at: string | null;
  eta: string | null;
}

/** A US number +1415555XXXX (the sandbox fails numbers ending 0000–0002, so they are skipped). */
export const number = (n: number) => `+1415555${String(3 + (n % 9_997)).padStart(4, "0")}`;

/** `count` recipients from `number(from)` on, each with `name` R1, R2, … for the template. */
export const recipients = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({
    to_number: number(from + i),
    variables: { name: `R${i + 1}` },
  }));

/**
 * The Worker's env with a campaign queue that keeps its jobs in `jobs` instead of running them:
 * a test then decides when (or whether) a started campaign's messages are made.
 */
export function heldCampaignQueue(): { env: Env; jobs: unknown[] } {
  const jobs: unknown[] = [];
  const queue = { send: async (body: unknown) => void jobs.push(body) } as unknown as Queue;
  return { env: { ...env, CAMPAIGN_QUEUE: queue }, jobs };
}

/** Creates a draft; asserts 201. */
export async function createCampaign(key: string, body: Record<string, unknown>): Promise<Campaign> {
  const res = await call<{ data: Campaign }>("POST", "/v1/chatapp/campaigns", {
    key,
    body: { name: "Run", type: "text", content: "Hi {{name}}", ...body },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** `POST /v1/chatapp/campaigns/{id}/{command}`. */
export function command(key: string, id: string, name: "start" | "pause" | "resume" | "cancel") {
  return call<{ data: Campaign }>("POST", `/v1/chatapp/campaigns/${id}/${name}`, { key });
}

export async function showCampaign(key: string, id: string): Promise<Campaign> {
  const res = await call<{ data: Campaign }>("GET", `/v1/chatapp/campaigns/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Polls the campaign until `done` holds (10 s at most). */
export async function waitForCampaign(
  key: string,
  id: string,
  done: (campaign: Campaign) => boolean,
  timeout = 10_000,
): Promise<Campaign> {
  return waitFor(
    async () => {
      const campaign = await showCampaign(key, id);
      if (!done(campaign))
        throw new Error(`campaign is ${campaign.status}: ${JSON.stringify(campaign.stats)}`);
      return campaign;
    },
    {
      reason: `campaign ${id} to be done (the campaign and outbound queues the runtime delivers)`,
      timeoutMs: timeout,
      intervalMs: 100,
    },
  );
}

export interface CampaignMessage {
  id: string;
  chatapp_session_id: string;
  to_number: string;
  content: string | null;
  status: string;
  reason: string | null;
  delay_between: number;
  send_index: number;
  sent_at: number | null;
  cost: number;
  metadata: string;
}

/**
 * The account database holding campaign `campaignId`: the campaign's rows are all in its account's
 * database, and callers name only the campaign.
 */
async function campaignD1(campaignId: string): Promise<D1Database> {
  for (const d1 of everyAccountD1()) {
    if (await d1.prepare("SELECT 1 FROM campaigns WHERE id = ?").bind(campaignId).first()) return d1;
  }
  throw new Error(`campaign ${campaignId} is in no account database`);
}

/** The campaign's message rows in D1, by recipient order. */
export async function campaignMessages(campaignId: string): Promise<CampaignMessage[]> {
  const { results } = await (await campaignD1(campaignId))
    .prepare(
      `SELECT id, chatapp_session_id, to_number, content, status, reason, delay_between, send_index, sent_at, cost, metadata
     FROM messages WHERE campaign_id = ? ORDER BY send_index`,
    )
    .bind(campaignId)
    .all<CampaignMessage>();
  return results;
}

/**
 * The statistics recounted from the rows: each recipient once, by its message's status, or by its
 * own (`skipped`, or `failed` without a message); `replied` from the recipients' `replied_at`.
 */
export async function recount(campaignId: string): Promise<Campaign["stats"]> {
  const row = await (await campaignD1(campaignId))
    .prepare(
      `SELECT count(*) AS total,
       sum(coalesce(m.status IN ('queued', 'scheduled'), r.status = 'pending')) AS queued,
       sum(coalesce(m.status = 'sent', 0)) AS sent, sum(coalesce(m.status = 'delivered', 0)) AS delivered,
       sum(coalesce(m.status = 'read', 0)) AS read, sum(coalesce(m.status = 'failed', r.status = 'failed')) AS failed,
       sum(r.replied_at IS NOT NULL) AS replied, sum(r.status = 'skipped') AS skipped
     FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id WHERE r.campaign_id = ?`,
    )
    .bind(campaignId)
    .first<Campaign["stats"]>();
  if (!row) throw new Error("no recipients");
  return row;
}

/** Outbox entries of a session object (only campaign `campaignId`'s, when given), by state. */
export async function outboxStates(sessionId: string, campaignId?: string): Promise<Record<string, number>> {
  return runInDurableObject(sessionStub(sessionId), async (_instance, state) => {
    const rows = state.storage.sql
      .exec<{ state: string; n: number }>(
        "SELECT state, count(*) AS n FROM outbox WHERE ? IS NULL OR campaign_id = ? GROUP BY state",
        campaignId ?? null,
        campaignId ?? null,
      )
      .toArray();
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  });
}
