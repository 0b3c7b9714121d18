import { describe, expect, it } from "vitest";
import { call, clockMoves, createAccount, createSession, expectProblem, type SessionRecord } from "./helpers";

// `GET /v1/chatapp/sessions`: cursor-paged as the message list is (`limit`, `cursor`, Laravel's
// cursor-paginator `links` and `meta`), with every session on a first page of the default size.

interface SessionPage {
  success: boolean;
  sessions: SessionRecord[];
  links: { first: null; last: null; prev: string | null; next: string | null };
  meta: { path: string; per_page: number; next_cursor: string | null; prev_cursor: string | null };
}

const list = (key: string, query = "") =>
  call<SessionPage>("GET", `/v1/chatapp/sessions${query ? `?${query}` : ""}`, { key });

/** Creates `count` sessions one after another; returns their ids, newest first. */
async function sessionsOf(key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.unshift((await createSession(key)).session.id);
    // Distinct creation times, so that the order is the creation order.
    await clockMoves();
  }
  return ids;
}

describe("GET /v1/chatapp/sessions paging", () => {
  it("answers every session, newest first, on a first page of the default size", async () => {
    const { key } = await createAccount();
    const ids = await sessionsOf(key, 3);
    const res = await list(key);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.sessions.map((s) => s.id)).toEqual(ids);
    expect(res.body.meta).toEqual({
      path: "http://localhost/v1/chatapp/sessions",
      per_page: 100,
      next_cursor: null,
      prev_cursor: null,
    });
    expect(res.body.links).toEqual({ first: null, last: null, prev: null, next: null });
  });

  it("walks forward through every page with next_cursor, and back with prev_cursor", async () => {
    const { key } = await createAccount();
    const ids = await sessionsOf(key, 5);
    const path = "http://localhost/v1/chatapp/sessions";

    const first = await list(key, "limit=2");
    expect(first.body.sessions.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.body.meta).toMatchObject({ per_page: 2, prev_cursor: null });
    expect(first.body.links.next).toBe(`${path}?limit=2&cursor=${first.body.meta.next_cursor}`);

    const second = await list(key, `limit=2&cursor=${first.body.meta.next_cursor}`);
    expect(second.body.sessions.map((s) => s.id)).toEqual(ids.slice(2, 4));
    expect(second.body.meta.prev_cursor).not.toBeNull();

    const third = await list(key, `limit=2&cursor=${second.body.meta.next_cursor}`);
    expect(third.body.sessions.map((s) => s.id)).toEqual(ids.slice(4));
    expect(third.body.meta.next_cursor).toBeNull();
    expect(third.body.links.next).toBeNull();

    const back = await list(key, `limit=2&cursor=${third.body.meta.prev_cursor}`);
    expect(back.body.sessions.map((s) => s.id)).toEqual(ids.slice(2, 4));
    const start = await list(key, `limit=2&cursor=${back.body.meta.prev_cursor}`);
    expect(start.body.sessions.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(start.body.meta.prev_cursor).toBeNull();
  });

  it("never pages into another account's sessions", async () => {
    const mine = await createAccount();
    const theirs = await createAccount();
    const ids = await sessionsOf(mine.key, 2);
    await sessionsOf(theirs.key, 2);
    const first = await list(mine.key, "limit=1");
    const second = await list(mine.key, `limit=1&cursor=${first.body.meta.next_cursor}`);
    expect([...first.body.sessions, ...second.body.sessions].map((s) => s.id)).toEqual(ids);
    expect(second.body.meta.next_cursor).toBeNull();
  });

  it.each([
    ["a cursor that is not base64", "cursor=!!!", "cursor"],
    ["a cursor of garbage", `cursor=${btoa("garbage")}`, "cursor"],
    ["a cursor of the wrong shape", `cursor=${btoa(JSON.stringify({ t: "x", i: "y", d: "n" }))}`, "cursor"],
    ["a very long cursor", `cursor=${"A".repeat(500)}`, "cursor"],
    ["a limit of 0", "limit=0", "limit"],
    ["a limit over 100", "limit=101", "limit"],
    ["a limit that is not a number", "limit=ten", "limit"],
  ])("refuses %s with 422 validation_failed", async (_label, query, field) => {
    const { key } = await createAccount();
    const problem = expectProblem(await list(key, query), 422, "validation_failed");
    expect(Object.keys(problem.errors as object)).toEqual([field]);
  });
});
