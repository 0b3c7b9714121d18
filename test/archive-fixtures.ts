import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { components } from "../client/schema";
import { ADMIN_TOKEN, call } from "./helpers";

// The archive job and archives as the API shows them (docs/retention.md, Archives), for the archive tests.

/** An archive as `GET /v1/account/archives` lists it: the OpenAPI document's `Archive`. */
export type Archive = components["schemas"]["Archive"];

/** What a run of the job answers: archives written, and records moved per kind. */
export interface ArchiveRun {
  archives: number;
  messages: number;
  otps: number;
  campaign_recipients: number;
}

/** Sets the account's `message_retention_days` through the admin API; answers the retention now in force. */
export async function setRetention(accountId: string, days: number | null): Promise<number> {
  const res = await call<{ data: { account: { message_retention_days: number } } }>(
    "PATCH",
    `/admin/accounts/${accountId}`,
    { key: ADMIN_TOKEN, body: { message_retention_days: days } },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.data.account.message_retention_days;
}

/** `POST /admin/jobs/archive_messages`: one run of the job now, over every account. */
export async function runArchiveJob(): Promise<ArchiveRun> {
  const res = await call<{ data: { result: ArchiveRun } }>("POST", "/admin/jobs/archive_messages", {
    key: ADMIN_TOKEN,
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.result;
}

/** The account's archives, newest first (one page). */
export async function archivesOf(key: string): Promise<Archive[]> {
  const res = await call<{ data: Archive[] }>("GET", "/v1/account/archives", { key });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The lines of archive `id`, parsed (downloaded by a client that takes no gzip: the service decodes). */
export async function archiveLines(key: string, id: string): Promise<Record<string, unknown>[]> {
  const res = await exports.default.fetch(
    new Request(`http://localhost/v1/account/archives/${id}`, {
      headers: { Authorization: `Bearer ${key}`, "Accept-Encoding": "identity" },
    }),
  );
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}
