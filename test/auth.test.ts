import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { accountD1, everyAccountD1 } from "./databases";
import {
  ADMIN_TOKEN,
  type ApiResponse,
  call,
  createAccount,
  createSession,
  expectProblem,
  showSession,
  waitFor,
} from "./helpers";

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
/** Well formed (`sk_` + 43 base64url characters) but never issued. */
const UNKNOWN_KEY = `sk_${"A".repeat(43)}`;

function expectUnauthenticated(res: ApiResponse): void {
  const problem = expectProblem(res, 401, "unauthenticated");
  expect(problem.title).toBe("Unauthenticated");
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer( |$)/);
  expect(Object.keys(problem).sort()).toEqual(
    ["code", "detail", "request_id", "status", "success", "title", "type"].sort(),
  );
}

/** Every authenticated route family: the /v1 session routes and the sandbox's script routes. */
const protectedRoutes: [string, string][] = [
  ["GET", "/v1/chatapp/sessions"],
  ["POST", "/v1/chatapp/sessions"],
  ["GET", `/v1/chatapp/sessions/${UNKNOWN_ID}`],
  ["GET", `/v1/chatapp/sessions/${UNKNOWN_ID}/qr-code`],
  ["PATCH", `/v1/chatapp/sessions/${UNKNOWN_ID}/disconnect`],
  ["PATCH", `/v1/chatapp/sessions/${UNKNOWN_ID}/reconnect`],
  ["DELETE", `/v1/chatapp/sessions/${UNKNOWN_ID}`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/scan`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/drop`],
  ["POST", `/sandbox/sessions/${UNKNOWN_ID}/ban`],
];

describe("bearer API keys", () => {
  for (const [method, path] of protectedRoutes) {
    it(`${method} ${path} without Authorization is 401`, async () => {
      expectUnauthenticated(await call(method, path));
    });
  }

  const malformed: [string, string][] = [
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["the scheme alone", "Bearer"],
    ["the scheme and blanks", "Bearer    "],
    ["a key of the wrong shape", "Bearer not-a-key"],
    ["a truncated key", `Bearer ${UNKNOWN_KEY.slice(0, -1)}`],
    ["two tokens", `Bearer ${UNKNOWN_KEY} ${UNKNOWN_KEY}`],
    ["a key without the scheme", UNKNOWN_KEY],
  ];
  for (const [what, header] of malformed) {
    it(`refuses ${what} with 401`, async () => {
      const res = await call("GET", "/v1/chatapp/sessions", { headers: { Authorization: header } });
      expectUnauthenticated(res);
    });
  }

  it("refuses a well-formed key that was never issued", async () => {
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key: UNKNOWN_KEY }));
  });

  it("refuses the admin token on /v1", async () => {
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key: ADMIN_TOKEN }));
  });

  it("refuses a revoked key at once, on every route", async () => {
    const { accountId } = await createAccount();
    const issued = await call<{ data: { key: { id: string }; api_key: string } }>(
      "POST",
      `/admin/accounts/${accountId}/keys`,
      { key: ADMIN_TOKEN, body: {} },
    );
    const key = issued.body.data.api_key;
    const { session } = await createSession(key);
    expect(
      (await call("DELETE", `/admin/keys/${issued.body.data.key.id}`, { key: ADMIN_TOKEN })).status,
    ).toBe(200);
    expectUnauthenticated(await call("GET", "/v1/chatapp/sessions", { key }));
    expectUnauthenticated(await call("GET", `/v1/chatapp/sessions/${session.id}`, { key }));
    expectUnauthenticated(await call("POST", `/sandbox/sessions/${session.id}/scan`, { key }));
  });

  it("checks the key before the route: an unknown /v1 path without a key is 401", async () => {
    expectUnauthenticated(await call("GET", "/v1/nothing-here"));
  });

  it("accepts a live key, with the scheme in any case", async () => {
    const { key } = await createAccount();
    const res = await call<{ success: boolean; sessions: unknown[] }>("GET", "/v1/chatapp/sessions", {
      headers: { Authorization: `bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, sessions: [] });
  });

  it("records when a key was last used", async () => {
    const { accountId, key } = await createAccount();
    expect((await call("GET", "/v1/chatapp/sessions", { key })).status).toBe(200);
    // The touch runs in waitUntil, which the runtime finishes after the response.
    const lastUsed = await waitFor(
      async () =>
        (
          await (
            await accountD1(accountId)
          )
            .prepare("SELECT last_used_at FROM api_keys WHERE account_id = ?")
            .bind(accountId)
            .first<{ last_used_at: number | null }>()
        )?.last_used_at ?? undefined,
      { reason: "the key's touch (run in waitUntil)", timeoutMs: 1_000, intervalMs: 20 },
    );
    expect(lastUsed).toEqual(expect.any(Number));
  });
});

/** Whether a documented 404 response is an HTML page (`text/html`) rather than problem JSON. */
function isPage(notFound: object | undefined): boolean {
  return notFound !== undefined && "content" in notFound && "text/html" in (notFound.content as object);
}

/**
 * Every documented route, from the app's OpenAPI registry: `[METHOD, path, security schemes,
 * whether it is an HTML page (its 404 is documented as text/html)]`.
 */
const documented: [string, string, string[], boolean][] = createApp().openAPIRegistry.definitions.flatMap(
  (definition) =>
    definition.type === "route"
      ? [
          [
            definition.route.method.toUpperCase(),
            definition.route.path,
            (definition.route.security ?? []).flatMap((requirement) => Object.keys(requirement)),
            isPage(definition.route.responses[404]),
          ] as [string, string, string[], boolean],
        ]
      : [],
);
const byKey = documented.filter(([, , security]) => security.includes("ApiKey"));
// `/link/{token}/…` routes take a link token in the path and no API key: they are left out of the
// key cases below on purpose and get their own token cases instead.
const byTokenOnly = documented.filter(
  ([, , security]) => security.length > 0 && !security.includes("ApiKey") && security.includes("LinkToken"),
);
const fill = (path: string) => path.replace("{id}", UNKNOWN_ID).replace("{token}", "A".repeat(43));

describe("security cases generated from the route table", () => {
  it("covers the session routes, the live route and the link routes", () => {
    const keyed = byKey.map(([method, path]) => `${method} ${path}`);
    expect(keyed).toEqual(
      expect.arrayContaining([
        "GET /v1/chatapp/sessions/{id}/live",
        "POST /v1/chatapp/sessions/{id}/link-url",
        "DELETE /v1/chatapp/sessions/{id}/link-url",
        "POST /sandbox/sessions/{id}/scan",
      ]),
    );
    expect(byTokenOnly.map(([method, path]) => `${method} ${path}`).sort()).toEqual(
      [
        "GET /link/{token}",
        "GET /link/{token}/session",
        "POST /link/{token}/pairing-code",
        "POST /link/{token}/reconnect",
      ].sort(),
    );
  });

  for (const [method, path] of byKey) {
    it(`${method} ${path} without a key is 401`, async () => {
      expectUnauthenticated(await call(method, fill(path)));
    });
  }

  for (const [method, path] of byTokenOnly.filter(([, , , page]) => !page)) {
    it(`${method} ${path} with an unknown token is 404 link_not_found, an API key instead too`, async () => {
      const { key } = await createAccount();
      expectProblem(await call(method, fill(path)), 404, "link_not_found");
      expectProblem(await call(method, fill(path), { key }), 404, "link_not_found");
    });
  }

  for (const [method, path] of byTokenOnly.filter(([, , , page]) => page)) {
    it(`${method} ${path} (a page) with an unknown token is a 404 HTML page, an API key instead too`, async () => {
      const { key } = await createAccount();
      for (const res of [await call(method, fill(path)), await call(method, fill(path), { key })]) {
        expect(res.status).toBe(404);
        expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
        expect(res.text).toContain("This link is not valid");
      }
    });
  }

  /** Valid requests for the session routes that need a body or query, so that only ownership fails. */
  const requests: Record<string, { body?: unknown; query?: string }> = {
    "POST /v1/chatapp/sessions/{id}/pairing-code": { body: { phone_number: "+14155552671" } },
    "POST /sandbox/sessions/{id}/inbound": {
      body: { from_number: "+14155552672", type: "text", content: "Hi" },
    },
    "POST /sandbox/sessions/{id}/reactions": {
      body: { from_number: "+14155552672", message_id: crypto.randomUUID(), emoji: "👍" },
    },
    "GET /sandbox/sessions/{id}/received": { query: "?to_number=%2B14155552672" },
    "POST /sandbox/sessions/{id}/phone": { body: { online: false } },
    "POST /sandbox/sessions/{id}/health": { body: { timelock: null, cap: null, quality: null } },
    "POST /v1/chatapp/sessions/{id}/contacts/check": { body: { numbers: ["+14155552672"] } },
    "POST /v1/chatapp/sessions/{id}/templates": {
      body: {
        name: "order_update",
        language: "en_US",
        category: "UTILITY",
        components: [{ type: "BODY", text: "Order {{1}} is on its way." }],
      },
    },
  };
  for (const [method, path] of byKey.filter(([, path]) => path.includes("/sessions/{id}"))) {
    it(`${method} ${path}: another account's session is 404 and stays unchanged`, async () => {
      const { key } = await createAccount();
      const theirs = await createAccount();
      const { session } = await createSession(theirs.key);
      const before = await showSession(theirs.key, session.id);
      const request = requests[`${method} ${path}`] ?? {};
      const res = await call(method, `${path.replace("{id}", session.id)}${request.query ?? ""}`, {
        key,
        body: request.body,
      });
      expectProblem(res, 404, "not_found");
      expect(await showSession(theirs.key, session.id)).toEqual(before);
      // A token the call made could sit in either account's database.
      let tokens = 0;
      for (const d1 of everyAccountD1()) {
        const row = await d1
          .prepare("SELECT COUNT(*) AS n FROM link_tokens WHERE session_id = ?")
          .bind(session.id)
          .first<{ n: number }>();
        tokens += row?.n ?? 0;
      }
      expect(tokens).toBe(0);
    });
  }
});
